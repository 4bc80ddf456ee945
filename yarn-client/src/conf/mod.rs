//! Hadoop XML configuration, read the way Hadoop reads it, for the handful of keys an AM
//! needs (where the RM and NMs are). Pure parsing and lookup; the only I/O is reading
//! the site files in [`Configuration::add_file`] / [`Configuration::load`].
//!
//! * [`xml`]: one resource -> properties (quick-xml).
//! * [`Configuration`]: precedence (`final`), `${var}` expansion, typed getters.
//! * [`yarn`]: YARN defaults and RM (HA) address candidates, the RM web URLs by
//!   `yarn.http.policy`.
//! * [`hdfs`]: the NameNode's web (WebHDFS) URL by `dfs.http.policy`.

mod addr;
mod configuration;
mod env_source;
mod error;
mod expand;
pub mod hdfs;
mod load;
pub(crate) mod xml;
pub mod yarn;

#[cfg(test)]
mod tests;

pub use addr::HostPort;
pub use configuration::Configuration;
pub use env_source::EnvSource;
pub use error::ConfError;
pub use expand::MAX_SUBST;
pub use load::{conf_dirs, CONF_DIR_VARS, SITE_FILES};
pub use yarn::{rm_candidates, rm_web_urls, RmCandidate, RmService};
