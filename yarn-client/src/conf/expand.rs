//! Hadoop's `${var}` expansion (`Configuration.substituteVars`), re-implemented.
//!
//! Rules, as Hadoop applies them:
//! * `${name}` is replaced by the override ("system property") called `name` if there is
//!   one, else by the raw value of key `name`. Overrides win because Hadoop consults
//!   `System.getProperty` before the configuration.
//! * `${env.NAME}` is the environment variable; `${env.NAME:-default}` uses `default` when
//!   it is unset *or empty*, `${env.NAME-default}` only when it is unset.
//! * A variable name is the text between `${` and the next `}`; it may not be empty and
//!   may not contain a space or `$`.
//! * One variable is replaced per step, leftmost first, and the replacement is scanned
//!   again (values may contain variables). At most [`MAX_SUBST`] steps: more is an error,
//!   which is how loops such as `a=${b}`, `b=${a}` end.
//! * An unbound variable stops expansion: the text is returned as expanded so far, with
//!   that `${name}` left literally (later variables are not expanded either).
//! * A value that refers to its own variable (`a=x${a}`) is not expanded at all: the
//!   original text is returned.

use super::error::ConfError;

/// Hadoop's `Configuration.MAX_SUBST`.
pub const MAX_SUBST: usize = 20;

/// Where variable values come from.
pub(crate) trait Lookup {
    /// Override ("system property") or configuration key, overrides first.
    fn var(&self, name: &str) -> Option<String>;
    fn env(&self, name: &str) -> Option<String>;
}

/// Expand `expr`, the raw value of `key` (named in the depth error).
pub(crate) fn expand(key: &str, expr: &str, lookup: &impl Lookup) -> Result<String, ConfError> {
    let mut eval = expr.to_string();
    for _ in 0..MAX_SUBST {
        let Some((start, end)) = find_variable(&eval) else {
            return Ok(eval);
        };
        // `start..end` is the name; the expression spans `start-2 .. end+1`.
        let name = &eval[start..end];
        let value = match name.strip_prefix("env.") {
            Some(spec) if !spec.is_empty() => env_value(spec, lookup),
            _ => lookup.var(name),
        };
        let Some(value) = value else {
            return Ok(eval);
        };
        let reference = &eval[start - 2..end + 1];
        if value.contains(reference) {
            return Ok(expr.to_string());
        }
        eval = format!("{}{}{}", &eval[..start - 2], value, &eval[end + 1..]);
    }
    Err(ConfError::SubstitutionDepth {
        key: key.to_string(),
        limit: MAX_SUBST,
        expr: expr.to_string(),
    })
}

/// `NAME`, `NAME:-default` or `NAME-default` (the first `:-` or `-` decides).
fn env_value(spec: &str, lookup: &impl Lookup) -> Option<String> {
    let bytes = spec.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c == b':' && bytes.get(i + 1) == Some(&b'-') {
            return match lookup.env(&spec[..i]) {
                Some(v) if !v.is_empty() => Some(v),
                _ => Some(spec[i + 2..].to_string()),
            };
        }
        if c == b'-' {
            return lookup
                .env(&spec[..i])
                .or_else(|| Some(spec[i + 1..].to_string()));
        }
    }
    lookup.env(spec)
}

/// Byte range of the leftmost variable name (between `${` and `}`), if any.
fn find_variable(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(offset) = s[from..].find("${") {
        let start = from + offset + 2;
        let mut i = start;
        loop {
            match bytes.get(i) {
                None => return None,
                Some(b'}') if i > start => return Some((start, i)),
                Some(b'}' | b' ' | b'$') => {
                    from = i;
                    break;
                }
                Some(_) => i += 1,
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    struct Maps {
        vars: HashMap<&'static str, &'static str>,
        env: HashMap<&'static str, &'static str>,
    }

    impl Lookup for Maps {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).map(|v| v.to_string())
        }
        fn env(&self, name: &str) -> Option<String> {
            self.env.get(name).map(|v| v.to_string())
        }
    }

    fn maps(vars: &[(&'static str, &'static str)]) -> Maps {
        Maps {
            vars: vars.iter().copied().collect(),
            env: HashMap::from([("HOME", "/home/am"), ("EMPTY", "")]),
        }
    }

    fn x(expr: &str, m: &Maps) -> String {
        expand("k", expr, m).unwrap()
    }

    #[test]
    fn expands_keys_recursively() {
        let m = maps(&[("host", "rm1"), ("addr", "${host}:8030")]);
        assert_eq!(x("${addr}", &m), "rm1:8030");
        assert_eq!(x("a ${host} b ${host}", &m), "a rm1 b rm1");
        assert_eq!(x("no vars", &m), "no vars");
    }

    #[test]
    fn env_forms() {
        let m = maps(&[]);
        assert_eq!(x("${env.HOME}/x", &m), "/home/am/x");
        assert_eq!(x("${env.NOPE:-dflt}", &m), "dflt");
        assert_eq!(x("${env.EMPTY:-dflt}", &m), "dflt");
        assert_eq!(x("${env.EMPTY-dflt}", &m), "", "'-' only replaces unset");
        assert_eq!(x("${env.NOPE-dflt}", &m), "dflt");
        assert_eq!(x("${env.HOME:-dflt}", &m), "/home/am");
        assert_eq!(x("${env.NOPE}", &m), "${env.NOPE}");
    }

    #[test]
    fn unbound_variable_stops_expansion() {
        let m = maps(&[("b", "B")]);
        assert_eq!(x("${b}-${a}-${b}", &m), "B-${a}-${b}");
    }

    #[test]
    fn not_variables() {
        let m = maps(&[("a", "A")]);
        for s in ["${}", "${ a}", "$a", "${a", "$${a", "{a}"] {
            let want = s.replace("${a}", "A");
            assert_eq!(x(s, &m), want, "{s:?}");
        }
        assert_eq!(x("$${a}", &m), "$A");
        assert_eq!(x("${ x}${a}", &m), "${ x}A");
    }

    #[test]
    fn self_reference_returns_original() {
        let m = maps(&[("a", "x${a}"), ("b", "${a}")]);
        assert_eq!(x("${a}", &m), "${a}");
        assert_eq!(x("pre ${b}", &m), "pre ${b}");
    }

    #[test]
    fn loops_hit_the_depth_limit() {
        let m = maps(&[("a", "${b}"), ("b", "${a}")]);
        match expand("key.a", "${a}", &m) {
            Err(ConfError::SubstitutionDepth { key, limit, .. }) => {
                assert_eq!(key, "key.a");
                assert_eq!(limit, 20);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn depth_counts_substitutions_not_nesting() {
        // As in Hadoop, the 20th step must find nothing left to do: 19 variables expand,
        // 20 are "too deep" even without any nesting.
        let m = maps(&[("a", "1")]);
        assert_eq!(x(&"${a}".repeat(19), &m), "1".repeat(19));
        assert!(expand("k", &"${a}".repeat(20), &m).is_err());
    }
}
