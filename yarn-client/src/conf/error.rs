//! What can go wrong reading Hadoop configuration. Every variant names the file or key,
//! because the operator's next step is to open that file or grep for that key.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfError {
    /// The file exists but could not be read (permissions, a directory, not UTF-8...).
    #[error("cannot read configuration file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not well-formed XML, or not a Hadoop `<configuration>` document.
    #[error("malformed configuration XML in {resource} at byte {position}: {message}")]
    Malformed {
        resource: String,
        position: u64,
        message: String,
    },
    /// `${...}` expansion did not finish within Hadoop's limit (20 substitutions), which
    /// in practice means the variables refer to each other in a loop.
    #[error("variable substitution depth too large ({limit}) expanding {key} = {expr:?}")]
    SubstitutionDepth {
        key: String,
        limit: usize,
        expr: String,
    },
    /// A value that does not parse as the type asked for.
    #[error("{key} = {value:?} is not a valid {expected}")]
    InvalidValue {
        key: String,
        value: String,
        expected: &'static str,
    },
    /// A key that has no value and no default.
    #[error("{key} is not set")]
    Missing { key: String },
    /// RM HA is on but the list of RM ids is empty.
    #[error("yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty")]
    NoRmIds,
    /// RM HA is on but one RM id has no address for the wanted service.
    #[error(
        "RM id {rm_id}: neither {key}.{rm_id} nor yarn.resourcemanager.hostname.{rm_id} is set"
    )]
    MissingHaAddress { rm_id: String, key: String },
}
