//! Containers the AM gives back.
//!
//! A release is sent once, on the next allocate. It is remembered as *pending* until the RM
//! reports the container completed, because an RM that restarts and asks the AM to resync
//! has forgotten it; pending releases are then sent again.

use std::collections::BTreeSet;

use super::types::ContainerId;

#[derive(Debug, Clone, Default)]
pub struct Releases {
    to_send: BTreeSet<ContainerId>,
    pending: BTreeSet<ContainerId>,
}

impl Releases {
    /// Queue a container for release on the next allocate.
    pub fn release(&mut self, id: ContainerId) {
        self.pending.insert(id);
        self.to_send.insert(id);
    }

    /// Take the releases for the next allocate (each is sent once).
    pub fn take(&mut self) -> Vec<ContainerId> {
        std::mem::take(&mut self.to_send).into_iter().collect()
    }

    /// Put back the releases of a failed allocate.
    pub fn restore(&mut self, ids: Vec<ContainerId>) {
        self.to_send.extend(ids);
    }

    /// The RM reported these containers completed: nothing left to release for them.
    pub fn on_completed<'a>(&mut self, ids: impl IntoIterator<Item = &'a ContainerId>) {
        for id in ids {
            self.pending.remove(id);
        }
    }

    /// Resync: send every release the RM has not confirmed again.
    pub fn requeue_pending(&mut self) {
        self.to_send.extend(self.pending.iter().copied());
    }

    /// Released but not yet reported completed.
    pub fn is_pending(&self, id: &ContainerId) -> bool {
        self.pending.contains(id)
    }

    pub fn pending(&self) -> impl Iterator<Item = &ContainerId> {
        self.pending.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request_table::tests::cid;

    #[test]
    fn a_release_is_sent_once() {
        let mut r = Releases::default();
        r.release(cid(2));
        r.release(cid(2));
        assert_eq!(r.take(), vec![cid(2)]);
        assert!(r.take().is_empty());
    }

    #[test]
    fn failed_allocate_restores_releases() {
        let mut r = Releases::default();
        r.release(cid(2));
        let batch = r.take();
        r.release(cid(3));
        r.restore(batch);
        assert_eq!(r.take(), vec![cid(2), cid(3)]);
    }

    #[test]
    fn resync_resends_only_unconfirmed_releases() {
        let mut r = Releases::default();
        r.release(cid(2));
        r.release(cid(3));
        r.take();
        r.on_completed(&[cid(2)]);
        r.requeue_pending();
        assert_eq!(r.take(), vec![cid(3)]);
        assert_eq!(r.pending().copied().collect::<Vec<_>>(), vec![cid(3)]);
    }
}
