//! Node -> rack resolution.
//!
//! A node request must also raise its rack's entry, or the scheduler could never fall back
//! to "same rack". Java asks a topology script through `RackResolver`; an AM in Rust is
//! better served by the racks the RM itself reports (`NodeReportProto.rack_name`), so the
//! resolver is an input: a map, a closure, or the Hadoop default of one flat rack.

use std::collections::HashMap;

use super::types::DEFAULT_RACK;

/// Answers the rack of a node. Must always answer: Hadoop places unknown nodes in
/// [`DEFAULT_RACK`], and so should implementations.
pub trait RackResolver: Send + Sync {
    fn resolve(&self, node: &str) -> String;
}

/// Every node in [`DEFAULT_RACK`]: what Hadoop does without a topology script.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultRackResolver;

impl RackResolver for DefaultRackResolver {
    fn resolve(&self, _node: &str) -> String {
        DEFAULT_RACK.to_string()
    }
}

/// Known node -> rack pairs (e.g. from the RM's node reports); unknown nodes fall back to
/// [`DEFAULT_RACK`].
#[derive(Debug, Clone, Default)]
pub struct MapRackResolver {
    racks: HashMap<String, String>,
}

impl MapRackResolver {
    pub fn new(racks: HashMap<String, String>) -> Self {
        Self { racks }
    }
}

impl RackResolver for MapRackResolver {
    fn resolve(&self, node: &str) -> String {
        self.racks
            .get(node)
            .cloned()
            .unwrap_or_else(|| DEFAULT_RACK.to_string())
    }
}

impl<F> RackResolver for F
where
    F: Fn(&str) -> String + Send + Sync,
{
    fn resolve(&self, node: &str) -> String {
        self(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_resolver_falls_back_to_default_rack() {
        let r = MapRackResolver::new(HashMap::from([("h1".into(), "/r1".into())]));
        assert_eq!(r.resolve("h1"), "/r1");
        assert_eq!(r.resolve("h2"), DEFAULT_RACK);
    }

    #[test]
    fn closures_are_resolvers() {
        let r = |node: &str| format!("/rack-{}", &node[..1]);
        assert_eq!(RackResolver::resolve(&r, "a7"), "/rack-a");
        assert_eq!(DefaultRackResolver.resolve("x"), DEFAULT_RACK);
    }
}
