//! A box blur of a grey image, row by row: `par_chunks_mut` over the
//! output's rows, each reading a window of the input.

use rayon::prelude::*;

/// A grey image, one byte a pixel, row after row.
pub struct Image {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Image {
    /// A `width` x `height` image of noise over gradients, the same for the
    /// same `seed`.
    pub fn generate(width: usize, height: usize, seed: u64) -> Image {
        let pixels = (0..width * height)
            .into_par_iter()
            .map(|i| {
                let (x, y) = ((i % width) as u64, (i / width) as u64);
                let noise = (i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58;
                ((x * 255 / width as u64 + y * 255 / height as u64) / 2 + noise) as u8
            })
            .collect();
        Image {
            width,
            height,
            pixels,
        }
    }

    /// The image blurred with a (2r+1) x (2r+1) box, clamped at the edges.
    pub fn blurred(&self, r: usize) -> Image {
        let (w, h) = (self.width, self.height);
        let mut out = vec![0u8; w * h];
        out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let rows = y.saturating_sub(r)..(y + r + 1).min(h);
            for (x, pixel) in row.iter_mut().enumerate() {
                let cols = x.saturating_sub(r)..(x + r + 1).min(w);
                let mut sum = 0u32;
                for yy in rows.clone() {
                    let line = &self.pixels[yy * w..(yy + 1) * w];
                    sum += line[cols.clone()]
                        .iter()
                        .map(|&p| u32::from(p))
                        .sum::<u32>();
                }
                *pixel = (sum / (rows.len() * cols.len()) as u32) as u8;
            }
        });
        Image {
            width: w,
            height: h,
            pixels: out,
        }
    }

    /// FNV-1a of the pixels: a round's result, so the work is not optimised
    /// away and runs can be compared.
    pub fn checksum(&self) -> u64 {
        self.pixels.iter().fold(0xcbf2_9ce4_8422_2325, |h, &p| {
            (h ^ u64::from(p)).wrapping_mul(0x100_0000_01b3)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_image_stays_flat_and_a_blur_is_the_box_mean() {
        let flat = Image {
            width: 5,
            height: 4,
            pixels: vec![9; 20],
        };
        assert!(flat.blurred(1).pixels.iter().all(|&p| p == 9));
        let mut dot = vec![0u8; 9];
        dot[4] = 90;
        let dot = Image {
            width: 3,
            height: 3,
            pixels: dot,
        };
        // Every pixel's 3x3 window (clamped) holds the dot: 90 over its area.
        assert_eq!(dot.blurred(1).pixels, [22, 15, 22, 15, 10, 15, 22, 15, 22]);
    }
}
