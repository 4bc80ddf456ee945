//! The merged key/value view of several resources, with Hadoop's precedence rules.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use tracing::{debug, warn};

use super::addr::{parse_host_port, HostPort};
use super::env_source::EnvSource;
use super::error::ConfError;
use super::expand::{expand, Lookup};
use super::xml;

/// Hadoop-style configuration: later resources override earlier ones, except keys an
/// earlier resource marked `final`; values are expanded (`${...}`) when read.
#[derive(Debug, Clone, Default)]
pub struct Configuration {
    props: HashMap<String, Entry>,
    finals: HashSet<String>,
    overrides: HashMap<String, String>,
    env: EnvSource,
}

#[derive(Debug, Clone)]
struct Entry {
    value: String,
    /// Which resource set it (for logs and `source()`).
    source: String,
}

impl Configuration {
    /// An empty configuration (no defaults), reading the process environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Variables for `${name}` expansion that win over configuration keys, like Java
    /// system properties (`-Dname=value`) do in Hadoop. They do not change what
    /// [`Self::get`] returns for a key itself.
    pub fn with_overrides(mut self, overrides: HashMap<String, String>) -> Self {
        self.overrides = overrides;
        self
    }

    /// Where `${env.NAME}` reads from.
    pub fn with_env(mut self, env: EnvSource) -> Self {
        self.env = env;
        self
    }

    pub fn env(&self) -> &EnvSource {
        &self.env
    }

    /// Set a key programmatically (like `Configuration.set`; `final` does not apply).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.set_from(key, value, "programmatically");
    }

    /// Set a key, recording which resource it came from (shown by [`Self::source`]).
    pub(crate) fn set_from(
        &mut self,
        key: impl Into<String>,
        value: impl Into<String>,
        source: &str,
    ) {
        self.props.insert(
            key.into(),
            Entry {
                value: value.into(),
                source: source.to_string(),
            },
        );
    }

    /// Merge one resource given as text; `resource` names it in errors.
    pub fn add_xml(&mut self, xml_text: &str, resource: &str) -> Result<(), ConfError> {
        for p in xml::parse(xml_text, resource)? {
            if self.finals.contains(&p.name) {
                if self.props.get(&p.name).map(|e| &e.value) != Some(&p.value) {
                    warn!(
                        resource,
                        key = p.name,
                        "attempt to override final parameter ignored"
                    );
                }
                continue;
            }
            if p.is_final {
                self.finals.insert(p.name.clone());
            }
            self.props.insert(
                p.name,
                Entry {
                    value: p.value,
                    source: resource.to_string(),
                },
            );
        }
        Ok(())
    }

    /// Merge one resource file. A missing file is not an error (Hadoop's site files are
    /// optional): returns `Ok(false)`. Any other read failure is.
    pub fn add_file(&mut self, path: &Path) -> Result<bool, ConfError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                debug!(path = %path.display(), "configuration file absent; skipped");
                return Ok(false);
            }
            Err(source) => {
                return Err(ConfError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        self.add_xml(&text, &path.display().to_string())?;
        debug!(path = %path.display(), "configuration file loaded");
        Ok(true)
    }

    /// The value as written, without `${...}` expansion.
    pub fn get_raw(&self, key: &str) -> Option<&str> {
        self.props.get(key).map(|e| e.value.as_str())
    }

    /// Which resource the current value came from.
    pub fn source(&self, key: &str) -> Option<&str> {
        self.props.get(key).map(|e| e.source.as_str())
    }

    pub fn is_final(&self, key: &str) -> bool {
        self.finals.contains(key)
    }

    /// The expanded value (not trimmed, as Hadoop's `get`).
    pub fn get(&self, key: &str) -> Result<Option<String>, ConfError> {
        self.props
            .get(key)
            .map(|e| expand(key, &e.value, self))
            .transpose()
    }

    /// The expanded value, trimmed; empty counts as unset (Hadoop's `getTrimmed`).
    pub fn get_trimmed(&self, key: &str) -> Result<Option<String>, ConfError> {
        Ok(self
            .get(key)?
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty()))
    }

    /// The value, or an error naming the key when it is unset.
    pub fn require(&self, key: &str) -> Result<String, ConfError> {
        self.get_trimmed(key)?.ok_or_else(|| ConfError::Missing {
            key: key.to_string(),
        })
    }

    /// `true`/`false` (any case), else `default` when unset. Unlike Hadoop, which falls
    /// back to the default on garbage, garbage is an error: a typo should not silently
    /// turn a feature off.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ConfError> {
        match self.get_trimmed(key)? {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(invalid(key, v, "boolean")),
        }
    }

    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ConfError> {
        self.parse_or(key, default, "unsigned integer")
    }

    pub fn get_i64(&self, key: &str, default: i64) -> Result<i64, ConfError> {
        self.parse_or(key, default, "integer")
    }

    /// Comma-separated list, each item trimmed, empty items dropped
    /// (Hadoop's `getTrimmedStringCollection`).
    pub fn get_strings(&self, key: &str) -> Result<Vec<String>, ConfError> {
        Ok(self
            .get(key)?
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A `host:port` key; a value without port takes `default_port`. Unset is an error
    /// naming the key (set defaults with [`super::yarn::with_yarn_defaults`]).
    pub fn socket_addr(&self, key: &str, default_port: Option<u16>) -> Result<HostPort, ConfError> {
        let value = self.require(key)?;
        parse_host_port(&value, default_port).map_err(|why| ConfError::InvalidValue {
            key: key.to_string(),
            value,
            expected: why,
        })
    }

    /// Keys present, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.props.keys().map(String::as_str)
    }

    fn parse_or<T: std::str::FromStr>(
        &self,
        key: &str,
        default: T,
        expected: &'static str,
    ) -> Result<T, ConfError> {
        match self.get_trimmed(key)? {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| invalid(key, v, expected)),
        }
    }
}

impl Lookup for Configuration {
    fn var(&self, name: &str) -> Option<String> {
        self.overrides
            .get(name)
            .or_else(|| self.props.get(name).map(|e| &e.value))
            .cloned()
    }

    fn env(&self, name: &str) -> Option<String> {
        self.env.var(name)
    }
}

fn invalid(key: &str, value: String, expected: &'static str) -> ConfError {
    ConfError::InvalidValue {
        key: key.to_string(),
        value,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(xml_props: &str) -> Configuration {
        let mut c = Configuration::new().with_env(EnvSource::Map(HashMap::from([(
            "USER".to_string(),
            "am".to_string(),
        )])));
        c.add_xml(
            &format!("<configuration>{xml_props}</configuration>"),
            "first.xml",
        )
        .unwrap();
        c
    }

    fn prop(name: &str, value: &str) -> String {
        format!("<property><name>{name}</name><value>{value}</value></property>")
    }

    #[test]
    fn later_resources_override_but_not_finals() {
        let mut c = conf(&format!(
            "{}<property><name>locked</name><value>1</value><final>true</final></property>",
            prop("open", "1")
        ));
        c.add_xml(
            &format!(
                "<configuration>{}{}</configuration>",
                prop("open", "2"),
                prop("locked", "2")
            ),
            "second.xml",
        )
        .unwrap();
        assert_eq!(c.get("open").unwrap().as_deref(), Some("2"));
        assert_eq!(c.source("open"), Some("second.xml"));
        assert_eq!(c.get("locked").unwrap().as_deref(), Some("1"));
        assert_eq!(c.source("locked"), Some("first.xml"));
        assert!(c.is_final("locked"));
    }

    #[test]
    fn expansion_uses_keys_overrides_and_env() {
        let c = conf(
            &[
                prop("host", "rm1"),
                prop("addr", "${host}:8030"),
                prop("dir", "/tmp/${env.USER}"),
            ]
            .concat(),
        );
        assert_eq!(c.get("addr").unwrap().as_deref(), Some("rm1:8030"));
        assert_eq!(c.get("dir").unwrap().as_deref(), Some("/tmp/am"));
        assert_eq!(c.get_raw("addr"), Some("${host}:8030"));
        let c = c.with_overrides(HashMap::from([("host".to_string(), "rm9".to_string())]));
        assert_eq!(
            c.get("addr").unwrap().as_deref(),
            Some("rm9:8030"),
            "overrides win in expansion"
        );
        assert_eq!(
            c.get("host").unwrap().as_deref(),
            Some("rm1"),
            "but not for the key itself"
        );
    }

    #[test]
    fn variable_loop_is_an_error_naming_the_key() {
        let c = conf(&[prop("a", "${b}"), prop("b", "${a}")].concat());
        let err = c.get("a").unwrap_err();
        assert!(
            matches!(err, ConfError::SubstitutionDepth { ref key, limit: 20, .. } if key == "a"),
            "{err}"
        );
        assert!(c.get_bool("a", false).is_err());
    }

    #[test]
    fn typed_getters() {
        let c = conf(
            &[
                prop("t", " TRUE "),
                prop("f", "false"),
                prop("junk", "yes"),
                prop("n", " 42 "),
                prop("neg", "-3"),
                prop("list", " a, ,b ,c,"),
                prop("blank", "  "),
                prop("addr", "rm:8030"),
                prop("host", "rm"),
            ]
            .concat(),
        );
        assert!(c.get_bool("t", false).unwrap());
        assert!(!c.get_bool("f", true).unwrap());
        assert!(c.get_bool("unset", true).unwrap());
        assert!(matches!(
            c.get_bool("junk", true),
            Err(ConfError::InvalidValue { .. })
        ));
        assert_eq!(c.get_u64("n", 0).unwrap(), 42);
        assert_eq!(c.get_u64("unset", 7).unwrap(), 7);
        assert!(c.get_u64("neg", 0).is_err());
        assert_eq!(c.get_i64("neg", 0).unwrap(), -3);
        assert_eq!(c.get_strings("list").unwrap(), vec!["a", "b", "c"]);
        assert!(c.get_strings("unset").unwrap().is_empty());
        assert_eq!(c.get_trimmed("blank").unwrap(), None);
        assert_eq!(c.get("blank").unwrap().as_deref(), Some("  "));
        assert_eq!(c.socket_addr("addr", None).unwrap().to_string(), "rm:8030");
        assert_eq!(
            c.socket_addr("host", Some(8030)).unwrap().to_string(),
            "rm:8030"
        );
        let err = c.socket_addr("host", None).unwrap_err().to_string();
        assert!(err.contains("host") && err.contains("no port"), "{err}");
        assert!(matches!(
            c.socket_addr("unset", Some(1)),
            Err(ConfError::Missing { .. })
        ));
    }

    #[test]
    fn malformed_resource_leaves_config_unchanged() {
        let mut c = conf(&prop("a", "1"));
        let err = c
            .add_xml(
                "<configuration><property><name>a</name><value>2</value>",
                "broken.xml",
            )
            .unwrap_err();
        assert!(err.to_string().contains("broken.xml"), "{err}");
        assert_eq!(c.get("a").unwrap().as_deref(), Some("1"));
    }
}
