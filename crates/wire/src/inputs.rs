//! The `inputs` section of a job file: HDFS paths whose splits become tasks (the splitting
//! itself is the core's, `yarn_am_core::inputs`).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The job file's `inputs` section: which HDFS files, how to cut them, and the command each
/// split runs. `submit` replaces it by one task per split before anything is submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputsSpec {
    /// Absolute HDFS paths; any component may be a glob (`*`, `?`, `[abc]`, `[a-z]`, `[!x]`).
    /// A folder stands for the files directly in it (names starting with `_` or `.` left
    /// out, as MapReduce's FileInputFormat does).
    pub paths: Vec<String>,
    #[serde(default)]
    pub split: SplitBy,
    /// With `"split": "size"`: the bytes of each split (the last split of a file may be
    /// shorter).
    #[serde(default)]
    pub split_size_bytes: Option<u64>,
    /// Shell command of each split's task; `{split.url}`, `{split.path}`, `{split.offset}`,
    /// `{split.length}`, `{split.index}` and `{split.format}` are replaced, each by its value
    /// shell-quoted (one shell word, whatever a file name holds), and the same values are in
    /// the task's environment as `YARN_AM_SPLIT_URL` etc. `{split.cat}` is replaced by the
    /// command that writes the split's records to stdout (`yarn-am split cat`, quoted word
    /// by word), e.g. `{split.cat} | wc -w`.
    pub command: String,
    /// How `{split.cat}` reads a split: `text` (lines, each in exactly one split) or `bytes`
    /// (the raw range).
    #[serde(default)]
    pub format: RecordFormat,
    #[serde(default = "default_cpus")]
    pub cpus: u32,
    /// Task ids are `<prefix>-<index>` (default `split`).
    #[serde(default = "default_prefix")]
    pub id_prefix: String,
}

/// How files are cut into splits (one task each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitBy {
    /// One split per HDFS block: every byte of a split is on the same replica hosts.
    #[default]
    Block,
    /// One split per file.
    File,
    /// Splits of `split_size_bytes` each.
    Size,
}

fn default_cpus() -> u32 {
    1
}
fn default_prefix() -> String {
    "split".into()
}

/// Most paths an `inputs` section may name (each costs listing calls before submission).
pub const MAX_INPUT_PATHS: usize = 1000;

/// What is wrong with an `inputs` section, or with what HDFS holds for it.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum InputsError {
    #[error("inputs.paths is empty")]
    NoPaths,
    #[error("inputs.paths has {0} entries, above the limit of {MAX_INPUT_PATHS}")]
    TooManyPaths(usize),
    #[error("inputs.paths entry {0:?} is not an absolute HDFS path (it must start with `/`)")]
    NotAbsolute(String),
    #[error("inputs.paths entry {path:?}: {why}")]
    BadGlob { path: String, why: String },
    #[error("inputs.command is empty")]
    EmptyCommand,
    #[error("inputs.cpus must be at least 1")]
    ZeroCpus,
    #[error("inputs.split is \"size\" but inputs.split_size_bytes is missing or 0")]
    NoSplitSize,
    #[error("inputs.split_size_bytes is set but inputs.split is not \"size\"")]
    SplitSizeWithoutSize,
    #[error("inputs.id_prefix {0:?} is empty, has a `/` or is longer than 100 bytes")]
    BadPrefix(String),
    #[error("input {0} matches no file")]
    NoMatch(String),
    #[error("input file {0} is empty")]
    EmptyFile(String),
    #[error("the inputs make {count} splits, above the limit of {limit}")]
    TooManySplits { count: usize, limit: usize },
    #[error("HDFS reported blocks of {path} that do not cover it: {why}")]
    BadBlocks { path: String, why: String },
    /// A listing page that does not move past the previous one (audit L6): asking again
    /// would loop for ever.
    #[error(
        "listing {path}: the NameNode's page after {after:?} {why}, with {remaining} entries \
         said to remain"
    )]
    ListingStuck {
        path: String,
        after: String,
        why: &'static str,
        remaining: u64,
    },
}

impl InputsSpec {
    /// Checks what needs no HDFS: paths are absolute, globs parse, the command is there.
    pub fn validate(&self) -> Result<(), InputsError> {
        if self.paths.is_empty() {
            return Err(InputsError::NoPaths);
        }
        if self.paths.len() > MAX_INPUT_PATHS {
            return Err(InputsError::TooManyPaths(self.paths.len()));
        }
        for p in &self.paths {
            crate::glob::PathPattern::parse(p)?;
        }
        if self.command.trim().is_empty() {
            return Err(InputsError::EmptyCommand);
        }
        if self.cpus == 0 {
            return Err(InputsError::ZeroCpus);
        }
        match (self.split, self.split_size_bytes) {
            (SplitBy::Size, None | Some(0)) => return Err(InputsError::NoSplitSize),
            (SplitBy::Block | SplitBy::File, Some(_)) => {
                return Err(InputsError::SplitSizeWithoutSize)
            }
            _ => {}
        }
        if self.id_prefix.is_empty() || self.id_prefix.contains('/') || self.id_prefix.len() > 100 {
            return Err(InputsError::BadPrefix(self.id_prefix.clone()));
        }
        Ok(())
    }
}

/// How a split's bytes become its records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordFormat {
    /// Lines, MapReduce's rule: each line in exactly one split.
    #[default]
    Text,
    /// The split's raw byte range.
    Bytes,
}

impl RecordFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordFormat::Text => "text",
            RecordFormat::Bytes => "bytes",
        }
    }
}

impl std::str::FromStr for RecordFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "text" => Ok(RecordFormat::Text),
            "bytes" => Ok(RecordFormat::Bytes),
            other => Err(format!("unknown format {other:?} (text or bytes)")),
        }
    }
}
