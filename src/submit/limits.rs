//! Container sizes against the cluster's largest container, checked before anything is
//! staged or submitted.
//!
//! YARN takes an application whose executors are larger than
//! `yarn.scheduler.maximum-allocation-*` and then either refuses the first allocate call
//! (the AM fails with an InvalidResourceRequestException deep in its log) or, for the AM
//! container itself, fails the submission with a message about "invalid resource request".
//! The RM's `new-application` reply carries that maximum
//! (`maximum-resource-capability`), so the submit compares once and names the limit and
//! the flag to change while the user is still at the terminal.

use thiserror::Error;
use yarn_client::rest::Resource;

/// A container the RM will never grant.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SizeError {
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
    #[error("the {who} container asks for {asked} {unit}: {flag} must not be negative")]
    Negative {
        who: String,
        asked: i64,
        unit: &'static str,
        flag: String,
    },
}

/// A container larger than the RM will ever grant.
#[derive(Debug, Error, PartialEq, Eq)]
#[error(
    "the {who} container asks for {asked} {unit}, above the cluster's maximum allocation of \
     {max} {unit} ({key}); ask for at most {max} with {flag}"
)]
pub struct TooLarge {
    pub who: String,
    pub asked: i64,
    pub max: i64,
    pub unit: &'static str,
    pub key: &'static str,
    pub flag: String,
}

/// One container kind to check: what it is called, its size, and how the user sets it.
pub struct Asked {
    pub who: String,
    pub size: Resource,
    pub memory_flag: String,
    pub vcores_flag: String,
}

/// The first container of `asked` that does not fit in `max` (or asks for a negative
/// amount), memory before vcores.
pub fn check(asked: &[Asked], max: Resource) -> Result<(), SizeError> {
    for a in asked {
        for (value, unit, flag) in [
            (a.size.memory, "MB", &a.memory_flag),
            (i64::from(a.size.vcores), "vcores", &a.vcores_flag),
        ] {
            if value < 0 {
                return Err(SizeError::Negative {
                    who: a.who.clone(),
                    asked: value,
                    unit,
                    flag: flag.clone(),
                });
            }
        }
        if a.size.memory > max.memory {
            return Err(SizeError::TooLarge(TooLarge {
                who: a.who.clone(),
                asked: a.size.memory,
                max: max.memory,
                unit: "MB",
                key: "yarn.scheduler.maximum-allocation-mb",
                flag: a.memory_flag.clone(),
            }));
        }
        if a.size.vcores > max.vcores {
            return Err(SizeError::TooLarge(TooLarge {
                who: a.who.clone(),
                asked: i64::from(a.size.vcores),
                max: i64::from(max.vcores),
                unit: "vcores",
                key: "yarn.scheduler.maximum-allocation-vcores",
                flag: a.vcores_flag.clone(),
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(memory: i64, vcores: i32) -> Resource {
        Resource { memory, vcores }
    }

    fn asked(am: Resource, executor: Resource) -> [Asked; 2] {
        [
            Asked {
                who: "AM".into(),
                size: am,
                memory_flag: "--am-memory".into(),
                vcores_flag: "--am-vcores".into(),
            },
            Asked {
                who: "executor".into(),
                size: executor,
                memory_flag: "--executor-memory".into(),
                vcores_flag: "--executor-vcores".into(),
            },
        ]
    }

    #[test]
    fn sizes_at_the_maximum_fit() {
        assert_eq!(
            check(&asked(res(512, 1), res(4096, 4)), res(4096, 4)),
            Ok(())
        );
    }

    #[test]
    fn the_first_container_over_the_maximum_is_named_with_its_limit_and_flag() {
        let e = check(&asked(res(512, 1), res(8192, 1)), res(4096, 4)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the executor container asks for 8192 MB, above the cluster's maximum allocation \
             of 4096 MB (yarn.scheduler.maximum-allocation-mb); ask for at most 4096 with \
             --executor-memory"
        );
        let e = check(&asked(res(512, 8), res(8192, 1)), res(4096, 4)).unwrap_err();
        let SizeError::TooLarge(t) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(
            (t.who.as_str(), t.unit, t.flag.as_str()),
            ("AM", "vcores", "--am-vcores")
        );
        assert!(e
            .to_string()
            .contains("yarn.scheduler.maximum-allocation-vcores"));
    }

    #[test]
    fn negative_sizes_are_refused_naming_the_flag() {
        let e = check(&asked(res(-1, 1), res(512, 1)), res(4096, 4)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the AM container asks for -1 MB: --am-memory must not be negative"
        );
    }
}
