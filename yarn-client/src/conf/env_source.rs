//! Where environment variables come from: the process, or a fixed map (tests, and callers
//! that want to resolve a container's environment other than their own).

use std::collections::HashMap;

#[derive(Debug, Clone, Default)]
pub enum EnvSource {
    #[default]
    Process,
    Map(HashMap<String, String>),
}

impl EnvSource {
    pub fn var(&self, name: &str) -> Option<String> {
        match self {
            EnvSource::Process => std::env::var(name).ok(),
            EnvSource::Map(m) => m.get(name).cloned(),
        }
    }
}
