//! Word counts over generated text: `par_lines` folded into per-task maps,
//! reduced pairwise (a fold/reduce tree of joins).

use rayon::prelude::*;
use std::collections::HashMap;

/// A made-up vocabulary; the text draws words from it with a skew, so some
/// are common and most are rare.
const SYLLABLES: [&str; 16] = [
    "dre", "ad", "po", "ol", "ra", "yon", "ste", "al", "wor", "ker", "que", "ue", "sle", "ep",
    "wa", "ke",
];

/// `lines` lines of generated text, the same for the same `seed`.
pub fn generate_text(lines: usize, seed: u64) -> String {
    let mut state = seed | 1;
    let mut next = move || {
        // xorshift64*: enough for made-up text.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut text = String::with_capacity(lines * 40);
    for _ in 0..lines {
        for _ in 0..(4 + next() % 6) {
            // Squaring skews the draw toward the first syllables.
            let a = (next() % 16) * (next() % 16) / 16;
            let b = next() % 16;
            text.push_str(SYLLABLES[a as usize]);
            text.push_str(SYLLABLES[b as usize]);
            text.push(' ');
        }
        text.push('\n');
    }
    text
}

/// How often each word occurs in `text`.
pub fn count(text: &str) -> HashMap<&str, usize> {
    text.par_lines()
        .fold(HashMap::new, |mut counts, line| {
            for word in line.split_whitespace() {
                *counts.entry(word).or_insert(0) += 1;
            }
            counts
        })
        .reduce(HashMap::new, |mut a, b| {
            for (word, n) in b {
                *a.entry(word).or_insert(0) += n;
            }
            a
        })
}

/// The most common word and its count (the first in order on a tie).
pub fn most_common<'a>(counts: &HashMap<&'a str, usize>) -> Option<(&'a str, usize)> {
    counts
        .iter()
        .map(|(&word, &n)| (word, n))
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_every_word_once() {
        let counts = count("a b a\nc a\n\nb\n");
        assert_eq!(counts["a"], 3);
        assert_eq!(counts["b"], 2);
        assert_eq!(counts["c"], 1);
        assert_eq!(most_common(&counts), Some(("a", 3)));
    }

    #[test]
    fn the_parallel_count_matches_a_sequential_one() {
        let text = generate_text(5_000, 3);
        let words = text.split_whitespace().count();
        assert_eq!(count(&text).values().sum::<usize>(), words);
    }
}
