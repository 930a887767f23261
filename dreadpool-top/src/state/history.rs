//! Fixed-capacity ring buffers of recent values, for sparklines and charts.

use std::collections::VecDeque;

/// The last `capacity` values pushed, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring<T> {
    values: VecDeque<T>,
    capacity: usize,
}

impl<T: Clone> Ring<T> {
    /// An empty ring keeping at most `capacity` values (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Ring {
            values: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// Appends `value`, dropping the oldest one when full.
    pub fn push(&mut self, value: T) {
        if self.values.len() == self.capacity {
            self.values.pop_front();
        }
        self.values.push_back(value);
    }

    /// Number of values held.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when nothing has been pushed.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The most recent value.
    pub fn last(&self) -> Option<&T> {
        self.values.back()
    }

    /// Values oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        self.values.iter()
    }

    /// The newest `n` values (fewer if fewer were pushed), oldest first.
    pub fn tail(&self, n: usize) -> Vec<T> {
        let skip = self.values.len().saturating_sub(n);
        self.values.iter().skip(skip).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_values_in_order() {
        let mut ring = Ring::new(3);
        assert!(ring.is_empty());
        for v in 1..=5 {
            ring.push(v);
        }
        assert_eq!(ring.iter().copied().collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(ring.len(), 3);
        assert_eq!(ring.last(), Some(&5));
        assert_eq!(ring.tail(2), vec![4, 5]);
        assert_eq!(ring.tail(10), vec![3, 4, 5]);
    }

    #[test]
    fn zero_capacity_means_one() {
        let mut ring = Ring::new(0);
        ring.push('a');
        ring.push('b');
        assert_eq!(ring.tail(5), vec!['b']);
    }
}
