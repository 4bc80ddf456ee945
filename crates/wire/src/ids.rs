//! The ids: [`ExecutorId`], the one id the AM knows an executor by, from the allocator that
//! numbers it to the driver, the journal and the API; and [`TaskAttempt`], one attempt of one
//! task, from the driver to the poll protocol and the executor.
//!
//! Ids count up from 1 within an application: a later AM attempt starts past every id an
//! earlier one used (`Allocator::with_first_executor_id`, from the journal), so an old
//! executor can never pass for a new one.
//!
//! The wire keeps the forms it had when ids were strings in some places and numbers in
//! others: the default serde form is the decimal *string* (`"7"`: poll bodies, `/v1/*` JSON,
//! the journal's task lines, `YARN_AM_EXECUTOR_ID`, the poll MAC input), and [`as_number`]
//! gives the *number* form (the journal's `executor` lines). Either form is accepted when
//! reading, so old journals replay whichever way a line spelled the id.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A host name as YARN reports it (the NodeManager's host, without the port).
pub type HostName = Arc<str>;
/// A network-topology rack path such as `/rack1`.
pub type RackName = Arc<str>;

/// An executor's id: a positive integer, unique within the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ExecutorId(u64);

impl ExecutorId {
    pub const fn new(n: u64) -> Self {
        ExecutorId(n)
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// The id after this one (saturating: 2^64 executors are not a concern).
    pub const fn next(self) -> Self {
        ExecutorId(self.0.saturating_add(1))
    }
}

/// How the executor kinds of one app share the id space: kind `k` of `kinds` numbers its
/// executors `k + 1`, `k + 1 + kinds`, ... So the kind of any executor follows from its id
/// alone, also for one an earlier AM attempt started (adopted from the journal, which does
/// not record kinds), and each kind's allocator numbers its own without asking the others.
/// One kind (every app without kinds) numbers 1, 2, 3, ... as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdStripe {
    pub kind: u64,
    pub kinds: u64,
}

impl Default for IdStripe {
    fn default() -> Self {
        IdStripe { kind: 0, kinds: 1 }
    }
}

impl IdStripe {
    /// The kind executor `id` belongs to.
    pub fn kind_of(id: ExecutorId, kinds: usize) -> usize {
        let kinds = kinds.max(1) as u64;
        (id.0.saturating_sub(1) % kinds) as usize
    }

    /// The first id of this stripe at or after `from` (at least 1).
    pub fn at_or_after(self, from: ExecutorId) -> ExecutorId {
        let kinds = self.kinds.max(1);
        let from = from.0.max(1);
        let base = from - 1;
        let rem = base % kinds;
        let step = (self.kind + kinds - rem) % kinds;
        ExecutorId(base.saturating_add(step).saturating_add(1))
    }

    /// The id after `id` in this stripe.
    pub fn after(self, id: ExecutorId) -> ExecutorId {
        self.at_or_after(id.next())
    }
}

impl From<u64> for ExecutorId {
    fn from(n: u64) -> Self {
        ExecutorId(n)
    }
}

impl fmt::Display for ExecutorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A string that is not an executor id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an executor id (executor ids are decimal numbers, such as \"7\")")]
pub struct ParseExecutorIdError(pub String);

impl FromStr for ExecutorId {
    type Err = ParseExecutorIdError;

    /// Only the canonical decimal form (what [`fmt::Display`] writes): `"7"`, not `"07"` or
    /// `"+7"`, so one executor has one spelling (the poll MAC covers the spelling).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ParseExecutorIdError(s.to_string());
        let canonical = s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
        if !canonical {
            return Err(bad());
        }
        s.parse::<u64>().map(ExecutorId).map_err(|_| bad())
    }
}

impl Serialize for ExecutorId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Takes the string form or the number form.
struct IdVisitor;

impl serde::de::Visitor<'_> for IdVisitor {
    type Value = ExecutorId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an executor id (a decimal number, as a string or a number)")
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<ExecutorId, E> {
        Ok(ExecutorId(n))
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<ExecutorId, E> {
        u64::try_from(n)
            .map(ExecutorId)
            .map_err(|_| E::custom(format!("{n} is not an executor id (ids are not negative)")))
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<ExecutorId, E> {
        s.parse().map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for ExecutorId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

/// The number form, for `#[serde(with = "executor_id::as_number")]` fields that were `u64`.
pub mod as_number {
    use super::{ExecutorId, IdVisitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &ExecutorId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(id.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ExecutorId, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

/// One attempt of one task: the task's id (from the job file) and the attempt number (0 for
/// the first run, counting up across retries and AM attempts). An attempt runs at most once,
/// on one executor.
///
/// The same fact on the poll's wire (`running` and `kill` in
/// [`crate::poll`]), so the wire uses this type: `{"task_id": "t0", "attempt": 1}`,
/// unknown fields refused. [`crate::poll::TaskAssignment`] and
/// [`crate::poll::TaskResult`] carry the two fields flat beside their own (their
/// JSON predates this type) and give it back with `task_attempt()`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskAttempt {
    pub task_id: String,
    pub attempt: u32,
}

impl TaskAttempt {
    pub fn new(task_id: impl Into<String>, attempt: u32) -> Self {
        TaskAttempt {
            task_id: task_id.into(),
            attempt,
        }
    }
}

impl fmt::Display for TaskAttempt {
    /// `t0.1`: task `t0`, attempt 1 (as in the executor's output file names).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.task_id, self.attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_numbers_its_own_stripe_and_an_id_names_its_kind() {
        let e = ExecutorId::new;
        let one = IdStripe::default();
        assert_eq!(one.at_or_after(e(0)), e(1));
        assert_eq!(one.after(e(7)), e(8));
        let second = IdStripe { kind: 1, kinds: 3 };
        assert_eq!(second.at_or_after(e(1)), e(2));
        assert_eq!(second.after(e(2)), e(5));
        assert_eq!(second.at_or_after(e(6)), e(8));
        assert_eq!(second.at_or_after(e(8)), e(8));
        for n in 1..40 {
            let k = IdStripe::kind_of(e(n), 3);
            assert_eq!(
                IdStripe {
                    kind: k as u64,
                    kinds: 3
                }
                .at_or_after(e(n)),
                e(n)
            );
        }
        assert_eq!(IdStripe::kind_of(e(9), 1), 0);
    }

    #[test]
    fn parses_only_the_canonical_decimal_form() {
        assert_eq!("7".parse(), Ok(ExecutorId::new(7)));
        assert_eq!("0".parse(), Ok(ExecutorId::new(0)));
        assert_eq!(
            "18446744073709551615".parse(),
            Ok(ExecutorId::new(u64::MAX))
        );
        for bad in [
            "",
            "x",
            "e1",
            "07",
            "+7",
            "-1",
            " 7",
            "18446744073709551616",
        ] {
            let err = bad.parse::<ExecutorId>().unwrap_err();
            assert_eq!(err, ParseExecutorIdError(bad.to_string()));
            assert!(err.to_string().contains("is not an executor id"), "{err}");
        }
        assert_eq!(ExecutorId::new(42).to_string(), "42");
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Both {
        s: ExecutorId,
        #[serde(with = "as_number")]
        n: ExecutorId,
    }

    #[test]
    fn serde_keeps_the_string_and_number_forms_and_reads_either() {
        let both = Both {
            s: ExecutorId::new(3),
            n: ExecutorId::new(4),
        };
        let json = serde_json::to_string(&both).unwrap();
        assert_eq!(json, r#"{"s":"3","n":4}"#);
        assert_eq!(serde_json::from_str::<Both>(&json).unwrap(), both);
        let swapped: Both = serde_json::from_str(r#"{"s":3,"n":"4"}"#).unwrap();
        assert_eq!(swapped, both);
        let err = serde_json::from_str::<Both>(r#"{"s":"e1","n":4}"#).unwrap_err();
        assert!(
            err.to_string().contains("\"e1\" is not an executor id"),
            "{err}"
        );
        assert!(serde_json::from_str::<Both>(r#"{"s":-1,"n":4}"#).is_err());
    }

    #[test]
    fn a_task_attempt_keeps_the_polls_json_shape() {
        let a = TaskAttempt::new("t0", 1);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, r#"{"task_id":"t0","attempt":1}"#);
        assert_eq!(serde_json::from_str::<TaskAttempt>(&json).unwrap(), a);
        assert!(
            serde_json::from_str::<TaskAttempt>(r#"{"task_id":"t0","attempt":1,"x":2}"#).is_err()
        );
        assert_eq!(a.to_string(), "t0.1");
    }
}
