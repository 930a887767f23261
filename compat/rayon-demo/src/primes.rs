//! Counting primes in a range by trial division: many small, uneven tasks
//! (`par_iter` over the range, split by rayon's adaptive splitting).

use rayon::prelude::*;
use std::ops::Range;

/// How many numbers in `range` are prime.
pub fn count_in(range: Range<u64>) -> usize {
    range.into_par_iter().filter(|&n| is_prime(n)).count()
}

fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    if n.is_multiple_of(2) {
        return n == 2;
    }
    let mut d = 3;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 2;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_primes_below_a_hundred() {
        assert_eq!(count_in(0..100), 25);
        assert_eq!(count_in(1_000_000..1_000_100), 6);
    }
}
