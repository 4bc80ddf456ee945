//! The allocate `response_id` handshake.
//!
//! The RM accepts an allocate only if it echoes the id of the RM's last response; a
//! request carrying the id *before* that is treated as a retransmission and answered with
//! the cached previous response (its contents ignored). Registration resets the id to 0.

use tracing::warn;

/// `next(x) = (x + 1) & 0x7FFFFFFF`, the RM's increment (wraps without going negative).
pub fn next_response_id(id: i32) -> i32 {
    id.wrapping_add(1) & 0x7FFF_FFFF
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResponseId {
    last: i32,
}

impl ResponseId {
    /// The id to put in the next AllocateRequest.
    pub fn current(&self) -> i32 {
        self.last
    }

    /// Record the id of a successful allocate response. An id other than the expected
    /// successor is adopted anyway (the RM is the authority) but logged, since it means a
    /// response was lost or duplicated.
    pub fn on_response(&mut self, id: i32) {
        let expected = next_response_id(self.last);
        if id != expected && id != self.last {
            warn!(
                sent = self.last,
                expected,
                got = id,
                "unexpected allocate response id"
            );
        }
        self.last = id;
    }

    /// After (re-)registration the RM expects 0.
    pub fn reset(&mut self) {
        self.last = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_wraps_to_zero_not_negative() {
        assert_eq!(next_response_id(0), 1);
        assert_eq!(next_response_id(i32::MAX), 0);
    }

    #[test]
    fn tracks_last_response_and_resets() {
        let mut r = ResponseId::default();
        assert_eq!(r.current(), 0);
        r.on_response(1);
        r.on_response(2);
        assert_eq!(r.current(), 2);
        r.reset();
        assert_eq!(r.current(), 0);
    }
}
