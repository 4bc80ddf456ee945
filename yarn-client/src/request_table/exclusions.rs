//! Node exclusions (YARN's "blacklist"): nodes the scheduler must not place containers on.
//!
//! The RM takes deltas (additions, removals) on each allocate, so the AM keeps both the
//! deltas not yet sent and the full current list; the full list is what a resync re-sends.
//! Deltas are kept net of each other: excluding then re-including a node before the next
//! allocate sends only the removal, never both.

use std::collections::BTreeSet;

use tracing::warn;

#[derive(Debug, Clone, Default)]
pub struct Exclusions {
    current: BTreeSet<String>,
    additions: BTreeSet<String>,
    removals: BTreeSet<String>,
}

/// Deltas for one allocate call (`ResourceBlacklistRequestProto`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExclusionDelta {
    pub additions: Vec<String>,
    pub removals: Vec<String>,
}

impl ExclusionDelta {
    pub fn is_empty(&self) -> bool {
        self.additions.is_empty() && self.removals.is_empty()
    }
}

impl Exclusions {
    /// Exclude `add` and re-include `remove`. A node named in both is re-included (the
    /// removal is applied last), as Hadoop does, with a warning.
    pub fn update<A, R>(&mut self, add: A, remove: R)
    where
        A: IntoIterator,
        A::Item: Into<String>,
        R: IntoIterator,
        R::Item: Into<String>,
    {
        let add: Vec<String> = add.into_iter().map(Into::into).collect();
        let remove: Vec<String> = remove.into_iter().map(Into::into).collect();
        for node in &add {
            self.removals.remove(node);
            self.current.insert(node.clone());
            self.additions.insert(node.clone());
        }
        for node in &remove {
            if add.contains(node) {
                warn!(node, "node both excluded and re-included in one update");
            }
            self.additions.remove(node);
            self.current.remove(node);
            self.removals.insert(node.clone());
        }
    }

    /// Take the deltas for the next allocate.
    pub fn take(&mut self) -> ExclusionDelta {
        ExclusionDelta {
            additions: std::mem::take(&mut self.additions).into_iter().collect(),
            removals: std::mem::take(&mut self.removals).into_iter().collect(),
        }
    }

    /// Put back the deltas of a failed allocate, unless a later update already changed
    /// the node's state (then the later delta is what must be sent).
    pub fn restore(&mut self, delta: ExclusionDelta) {
        for node in delta.additions {
            if self.current.contains(&node) && !self.removals.contains(&node) {
                self.additions.insert(node);
            }
        }
        for node in delta.removals {
            if !self.current.contains(&node) && !self.additions.contains(&node) {
                self.removals.insert(node);
            }
        }
    }

    /// Resync: the RM forgot the list, so every excluded node is an addition again.
    pub fn requeue_all(&mut self) {
        self.additions.extend(self.current.iter().cloned());
    }

    /// The full current exclusion list.
    pub fn current(&self) -> impl Iterator<Item = &str> {
        self.current.iter().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: [&str; 0] = [];

    #[test]
    fn deltas_are_net_of_each_other() {
        let mut e = Exclusions::default();
        e.update(["a", "b"], NONE);
        e.update(NONE, ["a"]);
        let d = e.take();
        assert_eq!(d.additions, vec!["b"]);
        assert_eq!(d.removals, vec!["a"]);
        assert_eq!(e.current().collect::<Vec<_>>(), vec!["b"]);
        assert!(e.take().is_empty());
    }

    #[test]
    fn same_node_in_both_lists_ends_included() {
        let mut e = Exclusions::default();
        e.update(["a"], ["a"]);
        let d = e.take();
        assert!(d.additions.is_empty());
        assert_eq!(d.removals, vec!["a"]);
        assert_eq!(e.current().count(), 0);
    }

    #[test]
    fn restore_does_not_undo_a_later_update() {
        let mut e = Exclusions::default();
        e.update(["a", "b"], NONE);
        let failed = e.take();
        e.update(NONE, ["a"]);
        e.restore(failed);
        let d = e.take();
        assert_eq!(d.additions, vec!["b"]);
        assert_eq!(d.removals, vec!["a"]);
    }

    #[test]
    fn resync_resends_the_full_list() {
        let mut e = Exclusions::default();
        e.update(["a", "b"], NONE);
        e.take();
        e.update(["c"], ["b"]);
        e.requeue_all();
        let d = e.take();
        assert_eq!(d.additions, vec!["a", "c"]);
        assert_eq!(d.removals, vec!["b"]);
    }
}
