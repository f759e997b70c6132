//! [`FewMap`]: a map for the handful of entries of requests in flight; [`find_from`]: a
//! search that matches answers to what was asked when both come in the same order;
//! [`sort_by`]: one small sort for every list the client orders.

use std::borrow::Borrow;

/// A map of a few entries (the requests in flight on a connection, or of a read), kept in a
/// `Vec` and searched in order. Each key and value type of a `HashMap` brings its own hashing,
/// probing and rehashing code into the binary; this brings a few short loops.
#[derive(Debug)]
pub(crate) struct FewMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for FewMap<K, V> {
    fn default() -> Self {
        FewMap(Vec::new())
    }
}

impl<K: PartialEq, V> FewMap<K, V> {
    /// An empty map.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds `value` under `key`, replacing (and returning) what was there.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(core::mem::replace(v, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// The value under `key` (or what a key borrows as: a `&str` for a `String`).
    pub(crate) fn get<Q: PartialEq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.0
            .iter()
            .find(|(k, _)| k.borrow() == key)
            .map(|(_, v)| v)
    }

    /// The value under `key`, to change.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value under `key`, made by `make` first if there is none.
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let at = match self.0.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                self.0.push((key, make()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    /// Takes out the value under `key`.
    pub(crate) fn remove<Q: PartialEq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let at = self.0.iter().position(|(k, _)| k.borrow() == key)?;
        Some(self.0.swap_remove(at).1)
    }

    /// The number of entries.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Takes out every entry.
    #[cfg(any(test, feature = "group"))]
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// Whether there are none.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The values, in no particular order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    /// The values, mutable, in no particular order.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, v)| v)
    }
}

impl<K: PartialEq, V> FromIterator<(K, V)> for FewMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let mut map = FewMap::new();
        for (k, v) in entries {
            map.insert(k, v);
        }
        map
    }
}

impl<K, V> IntoIterator for FewMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// The index of the first of `items` from index `from` on, wrapping round to the start, for
/// which `is` holds. Answers that list their entries in the order asked (a broker's, to a
/// Fetch or ListOffsets) are matched in one step each by starting after the previous match;
/// any other order costs a longer scan, never a wrong match.
pub(crate) fn find_from<T>(
    items: &[T],
    from: usize,
    mut is: impl FnMut(&T) -> bool,
) -> Option<usize> {
    let (before, after) = items.split_at(from.min(items.len()));
    match after.iter().position(&mut is) {
        Some(i) => Some(from + i),
        None => before.iter().position(is),
    }
}

/// Sorts `items` so that no item is `less` than one before it: a heapsort, for every sort
/// the client does. std's `sort_unstable*` compiles a pattern-defeating quicksort with its
/// insertion sorts, pivot choices and heapsort fallback for each element type and comparison
/// (about 1.5 KB each in the footprint probe); this is two short loops, still O(n log n) for
/// the rare answer with thousands of entries. Not stable: equal items may end up in any order.
pub(crate) fn sort_by<T>(items: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    // Moves `heap[node]` down until both its children are no greater: `heap` is a binary
    // max-heap again below `node` (the children of `i` are `2i + 1` and `2i + 2`).
    fn sift_down<T>(heap: &mut [T], mut node: usize, less: &mut impl FnMut(&T, &T) -> bool) {
        loop {
            let mut child = 2 * node + 1;
            if child >= heap.len() {
                return;
            }
            if child + 1 < heap.len() && less(&heap[child], &heap[child + 1]) {
                child += 1;
            }
            if !less(&heap[node], &heap[child]) {
                return;
            }
            heap.swap(node, child);
            node = child;
        }
    }
    // Heapify from the last parent up, then move the greatest to the end, one at a time.
    for node in (0..items.len() / 2).rev() {
        sift_down(items, node, &mut less);
    }
    for end in (1..items.len()).rev() {
        items.swap(0, end);
        sift_down(&mut items[..end], 0, &mut less);
    }
}

/// [`sort_by`] in ascending order of `key`.
pub(crate) fn sort_by_key<T, K: Ord>(items: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(items, |a, b| key(a) < key(b));
}

/// [`sort_by`] in ascending order.
pub(crate) fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::lt);
}

#[cfg(test)]
mod tests {
    use super::{find_from, sort, sort_by, sort_by_key, FewMap};

    #[test]
    fn insert_replaces_and_remove_takes_out() {
        let mut m = FewMap::new();
        assert_eq!(m.insert(1, "a"), None);
        assert_eq!(m.insert(2, "b"), None);
        assert_eq!(m.insert(1, "c"), Some("a"));
        assert_eq!(m.len(), 2);
        assert_eq!(m.remove(&1), Some("c"));
        assert_eq!(m.remove(&1), None);
        assert_eq!(m.values().collect::<Vec<_>>(), [&"b"]);
        assert_eq!(m.iter().collect::<Vec<_>>(), [(&2, &"b")]);
        assert!(!m.is_empty());
        assert_eq!(m.into_iter().collect::<Vec<_>>(), [(2, "b")]);
    }

    #[test]
    fn lookups_and_made_entries() {
        let mut m: FewMap<i32, String> = [(1, "a".to_owned()), (1, "b".to_owned())]
            .into_iter()
            .collect();
        assert_eq!(m.len(), 1);
        assert_eq!(m.get(&1).map(String::as_str), Some("b"));
        m.get_mut(&1).unwrap().push('!');
        assert_eq!(m.get(&1).map(String::as_str), Some("b!"));
        assert_eq!(m.get_or_insert_with(2, || "c".to_owned()), "c");
        assert_eq!(m.get_or_insert_with(2, || "d".to_owned()), "c");
        assert_eq!(m.get(&3), None);
        assert_eq!(m.len(), 2);
        // String keys are found and taken out by `&str`.
        let mut m: FewMap<String, i32> = FewMap::new();
        m.insert("g".to_owned(), 1);
        m.insert("h".to_owned(), 2);
        assert_eq!(m.get("h"), Some(&2));
        assert_eq!(m.remove("g"), Some(1));
        assert_eq!(m.get("g"), None);
        m.clear();
        assert!(m.is_empty());
    }

    #[test]
    fn find_from_starts_at_the_cursor_and_wraps_round() {
        let items = [10, 20, 30, 20];
        assert_eq!(find_from(&items, 0, |&x| x == 20), Some(1));
        assert_eq!(find_from(&items, 2, |&x| x == 20), Some(3));
        // Past the last match: round to the start.
        assert_eq!(find_from(&items, 2, |&x| x == 10), Some(0));
        assert_eq!(find_from(&items, 4, |&x| x == 30), Some(2));
        assert_eq!(find_from(&items, 9, |&x| x == 30), Some(2));
        assert_eq!(find_from(&items, 1, |&x| x == 40), None);
        assert_eq!(find_from(&[] as &[i32], 0, |_| true), None);
        // Every step of a scan through answers in the order asked looks at one item.
        let mut looked = 0;
        let mut next = 0;
        for want in items {
            let i = find_from(&items, next, |&x| {
                looked += 1;
                x == want
            });
            next = i.unwrap() + 1;
        }
        assert_eq!(looked, 4);
    }

    /// Every length up to 40 in a scrambled order (`i * 17 % 41`: 41 is prime, so each length
    /// gets a different permutation), with and without duplicates.
    #[test]
    fn sorts_every_small_size_in_any_order_with_duplicates() {
        for len in 0..=40usize {
            for dups in [1, 3] {
                let mut v: Vec<usize> = (0..len).map(|i| (i * 17 % 41) / dups).collect();
                let mut want = v.clone();
                want.sort();
                sort(&mut v);
                assert_eq!(v, want, "len {len}, dups {dups}");
            }
        }
    }

    #[test]
    fn sorts_large_sorted_reversed_and_equal_inputs() {
        let ascending: Vec<u32> = (0..1000).collect();
        let mut v = ascending.clone();
        sort(&mut v);
        assert_eq!(v, ascending);
        v.reverse();
        sort(&mut v);
        assert_eq!(v, ascending);
        let mut same = vec![7u8; 100];
        sort(&mut same);
        assert_eq!(same, [7; 100]);
        // A scramble with many equal keys (values below 10): sorted by the key, each item kept.
        let mut pairs: Vec<(u32, u32)> = (0..1000).map(|i| (i * 7919 % 1000 % 10, i)).collect();
        sort_by_key(&mut pairs, |p| p.0);
        assert!(pairs.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut seconds: Vec<u32> = pairs.iter().map(|p| p.1).collect();
        seconds.sort();
        assert_eq!(seconds, ascending);
    }

    #[test]
    fn sort_by_takes_any_order() {
        let mut names: Vec<String> = ["b", "c", "a", "b"].map(String::from).to_vec();
        sort_by(&mut names, |a, b| a > b);
        assert_eq!(names, ["c", "b", "b", "a"]);
        sort_by(&mut names, |a, b| a.len() < b.len());
        assert!(names.iter().all(|n| n.len() == 1));
    }
}
