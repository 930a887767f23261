//! The scenarios: each an input, made before timing, and a run over it whose
//! result is checked.

use rayon::prelude::*;

/// Elements in the sum, map-collect and sort scenarios.
const N: usize = 10_000_000;
/// Items in the `par_bridge` stream (each a few hundred nanoseconds of work).
pub const BRIDGE_ITEMS: u64 = 1_000_000;
/// The matrices' side.
const MATRIX: usize = 384;
/// Depth of the `rayon::join` tree: 2^20 leaves, about a million joins.
const JOIN_DEPTH: u32 = 20;
/// Items of the `with_max_len(1)` iterator: one join per item.
const SINGLES: usize = 1_000_000;
/// The image's size.
const WIDTH: usize = 4096;
const HEIGHT: usize = 2048;

/// One pattern of rayon use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// `par_iter().sum()` over 10M u64: fine-grained.
    Sum,
    /// `par_iter().map(..).collect::<Vec<_>>()` of 10M: fine-grained.
    MapCollect,
    /// `par_sort` (stable, merge sort) of 10M random u64.
    Sort,
    /// `par_sort_unstable` (quicksort) of 10M random u64.
    SortUnstable,
    /// `par_bridge` over a sequential iterator: items taken one at a time
    /// through a shared lock, fine-grained.
    Bridge,
    /// A matrix product, rows in a `par_iter` and each row's columns in a
    /// nested `par_iter`.
    MatMul,
    /// A 3x3 blur of an image by `par_chunks_mut` over its rows.
    Chunks,
    /// A binary tree of `rayon::join` calls with nothing else in it: the
    /// pool's fork-join cost is the whole of the time, fine-grained.
    JoinTree,
    /// `into_par_iter().with_max_len(1)` over 1M numbers: the iterator is
    /// split down to single items, one join each, fine-grained.
    MaxLenOne,
}

/// What a scenario works on; made once, reset between repetitions.
pub enum Input {
    /// Numbers to sum, map or sort (sorts get a fresh copy of `original`).
    Numbers { original: Vec<u64>, work: Vec<u64> },
    /// Nothing: the work is generated (a stream, a tree of joins, a range).
    Stream,
    /// Two square matrices, row-major, the second transposed.
    Matrices { a: Vec<f64>, b_t: Vec<f64> },
    /// An image and room for its blur.
    Image { pixels: Vec<u16>, out: Vec<u16> },
}

fn random_numbers(n: usize, seed: u64) -> Vec<u64> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        })
        .collect()
}

/// A few hundred nanoseconds of arithmetic on one item.
pub fn mix(mut x: u64) -> u64 {
    for _ in 0..64 {
        x = x.rotate_left(7).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (x >> 31);
    }
    x
}

impl Scenario {
    /// Every scenario, in report order.
    pub const ALL: [Scenario; 9] = [
        Scenario::Sum,
        Scenario::MapCollect,
        Scenario::Sort,
        Scenario::SortUnstable,
        Scenario::Bridge,
        Scenario::MatMul,
        Scenario::Chunks,
        Scenario::JoinTree,
        Scenario::MaxLenOne,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Sum => "sum",
            Scenario::MapCollect => "map_collect",
            Scenario::Sort => "sort",
            Scenario::SortUnstable => "sort_unstable",
            Scenario::Bridge => "par_bridge",
            Scenario::MatMul => "matmul",
            Scenario::Chunks => "chunks",
            Scenario::JoinTree => "join_tree",
            Scenario::MaxLenOne => "max_len_1",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Its input.
    pub fn input(self) -> Input {
        match self {
            Scenario::Sum | Scenario::MapCollect | Scenario::Sort | Scenario::SortUnstable => {
                let original = random_numbers(N, 42);
                let work = original.clone();
                Input::Numbers { original, work }
            }
            Scenario::Bridge | Scenario::JoinTree | Scenario::MaxLenOne => Input::Stream,
            Scenario::MatMul => {
                let a = random_numbers(MATRIX * MATRIX, 1);
                let b = random_numbers(MATRIX * MATRIX, 2);
                let unit = |v: Vec<u64>| {
                    v.into_iter()
                        .map(|x| (x >> 11) as f64 / (1u64 << 53) as f64)
                        .collect()
                };
                Input::Matrices {
                    a: unit(a),
                    b_t: unit(b),
                }
            }
            Scenario::Chunks => Input::Image {
                pixels: random_numbers(WIDTH * HEIGHT, 3)
                    .into_iter()
                    .map(|x| x as u16)
                    .collect(),
                out: vec![0; WIDTH * HEIGHT],
            },
        }
    }

    /// Undoes a run's changes to the input (the sorts sort in place).
    pub fn reset(self, input: &mut Input) {
        if let Input::Numbers { original, work } = input {
            if matches!(self, Scenario::Sort | Scenario::SortUnstable) {
                work.copy_from_slice(original);
            }
        }
    }

    /// Runs the scenario once: what is timed.
    pub fn run(self, input: &mut Input) -> Output {
        match (self, input) {
            (Scenario::Sum, Input::Numbers { work, .. }) => {
                Output::Number(work.par_iter().map(|&x| x >> 8).sum())
            }
            (Scenario::MapCollect, Input::Numbers { work, .. }) => {
                Output::Numbers(work.par_iter().map(|&x| x.wrapping_mul(3) ^ 1).collect())
            }
            (Scenario::Sort, Input::Numbers { work, .. }) => {
                work.par_sort();
                Output::InPlace
            }
            (Scenario::SortUnstable, Input::Numbers { work, .. }) => {
                work.par_sort_unstable();
                Output::InPlace
            }
            (Scenario::Bridge, Input::Stream) => Output::Number(
                (0..BRIDGE_ITEMS)
                    .par_bridge()
                    .map(mix)
                    .reduce(|| 0, u64::wrapping_add),
            ),
            (Scenario::MatMul, Input::Matrices { a, b_t }) => Output::Matrix(
                a.par_chunks(MATRIX)
                    .map(|row| {
                        b_t.par_chunks(MATRIX)
                            .map(|col| row.iter().zip(col).map(|(x, y)| x * y).sum())
                            .collect()
                    })
                    .collect(),
            ),
            (Scenario::Chunks, Input::Image { pixels, out }) => {
                blur_rows(pixels, out);
                Output::InPlace
            }
            (Scenario::JoinTree, Input::Stream) => Output::Number(join_tree(JOIN_DEPTH)),
            (Scenario::MaxLenOne, Input::Stream) => Output::Number(
                (0..SINGLES)
                    .into_par_iter()
                    .with_max_len(1)
                    .map(|x| (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .reduce(|| 0, u64::wrapping_add),
            ),
            (scenario, _) => unreachable!("{scenario:?} was given another scenario's input"),
        }
    }

    /// Checks a run's result, outside the timing.
    ///
    /// # Panics
    ///
    /// When the result is wrong (a broken pool must not look fast).
    pub fn check(self, input: &Input, output: &Output) {
        match (self, input, output) {
            (Scenario::Sum, Input::Numbers { work, .. }, Output::Number(sum)) => {
                assert_eq!(*sum, work.iter().map(|&x| x >> 8).sum::<u64>());
            }
            (Scenario::MapCollect, Input::Numbers { work, .. }, Output::Numbers(mapped)) => {
                assert_eq!(mapped.len(), work.len());
                assert!(work
                    .iter()
                    .zip(mapped)
                    .all(|(&x, &y)| y == x.wrapping_mul(3) ^ 1));
            }
            (Scenario::Sort | Scenario::SortUnstable, Input::Numbers { original, work }, _) => {
                assert!(work.windows(2).all(|w| w[0] <= w[1]));
                assert_eq!(
                    work.iter().fold(0u64, |h, &x| h.wrapping_add(x)),
                    original.iter().fold(0u64, |h, &x| h.wrapping_add(x))
                );
            }
            (Scenario::Bridge, _, Output::Number(sum)) => {
                assert_eq!(*sum, (0..BRIDGE_ITEMS).map(mix).fold(0, u64::wrapping_add));
            }
            (Scenario::MatMul, Input::Matrices { a, b_t }, Output::Matrix(c)) => {
                for (i, j) in [(0, 0), (MATRIX - 1, 7), (MATRIX / 2, MATRIX - 1)] {
                    let row = &a[i * MATRIX..(i + 1) * MATRIX];
                    let col = &b_t[j * MATRIX..(j + 1) * MATRIX];
                    let expected: f64 = row.iter().zip(col).map(|(x, y)| x * y).sum();
                    assert_eq!(c[i][j], expected);
                }
            }
            (Scenario::Chunks, Input::Image { pixels, out }, _) => {
                let (x, y) = (WIDTH / 2, HEIGHT / 2);
                let mut sum = 0u32;
                for yy in y - 1..=y + 1 {
                    for xx in x - 1..=x + 1 {
                        sum += u32::from(pixels[yy * WIDTH + xx]);
                    }
                }
                assert_eq!(out[y * WIDTH + x], (sum / 9) as u16);
                assert_eq!(out[..WIDTH], pixels[..WIDTH]);
            }
            (Scenario::JoinTree, _, Output::Number(leaves)) => {
                assert_eq!(*leaves, 1 << JOIN_DEPTH);
            }
            (Scenario::MaxLenOne, _, Output::Number(sum)) => {
                let expected = (0..SINGLES)
                    .map(|x| (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .fold(0, u64::wrapping_add);
                assert_eq!(*sum, expected);
            }
            (scenario, _, _) => unreachable!("{scenario:?}: a result of another scenario"),
        }
    }
}

/// What a run made, for `check`.
pub enum Output {
    /// A sum.
    Number(u64),
    /// A collected vector.
    Numbers(Vec<u64>),
    /// A matrix, row by row.
    Matrix(Vec<Vec<f64>>),
    /// The result is in the input (sorted, or the image's `out`).
    InPlace,
}

/// The leaves of a complete binary tree of `depth` levels, counted by
/// forking at every inner node.
fn join_tree(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (left, right) = rayon::join(|| join_tree(depth - 1), || join_tree(depth - 1));
    left + right
}

/// A 3x3 box blur, the border copied: one `par_chunks_mut` task per row.
fn blur_rows(pixels: &[u16], out: &mut [u16]) {
    out.par_chunks_mut(WIDTH).enumerate().for_each(|(y, row)| {
        if y == 0 || y == HEIGHT - 1 {
            row.copy_from_slice(&pixels[y * WIDTH..(y + 1) * WIDTH]);
            return;
        }
        let above = &pixels[(y - 1) * WIDTH..y * WIDTH];
        let here = &pixels[y * WIDTH..(y + 1) * WIDTH];
        let below = &pixels[(y + 1) * WIDTH..(y + 2) * WIDTH];
        row[0] = here[0];
        row[WIDTH - 1] = here[WIDTH - 1];
        for x in 1..WIDTH - 1 {
            let sum: u32 = [above, here, below]
                .iter()
                .map(|line| u32::from(line[x - 1]) + u32::from(line[x]) + u32::from(line[x + 1]))
                .sum();
            row[x] = (sum / 9) as u16;
        }
    });
}
