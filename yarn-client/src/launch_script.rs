//! How the NodeManager turns a container launch context into `launch_container.sh`, and
//! how to get an environment value through it unchanged.
//!
//! Facts from Hadoop's `ContainerLaunch` and `ContainerExecutor.writeLaunchEnv` (3.x, as on
//! the test cluster's 3.4.1):
//!
//! - Every command and every environment value first goes through `expandEnvironment`,
//!   which replaces `<LOG_DIR>` with the container's log directory, `<CPS>` with `:`, `{{`
//!   with `$` and `}}` with nothing, anywhere in the text.
//! - A value the application set is then written as `export KEY="VALUE"` (the Unix
//!   `ShellScriptBuilder.env`), the script in UTF-8. Inside those double quotes bash still
//!   expands `$`, `` ` `` and `\`, and a `"` ends the value.
//! - The commands are joined with spaces and written as `exec /bin/bash -c "COMMAND"`, in
//!   double quotes too: the launch script expands `$(...)` and the like before the
//!   container's own bash sees the command. (yarn-am ships a user's command as a file
//!   instead, see the submitter.)
//!
//! [`literal_env_value`] escapes a value for both steps, so that the process sees exactly
//! the string the application gave.

/// `value`, written so that the NodeManager's launch script exports exactly `value`:
/// `\`, `"`, `$` and `` ` `` get a backslash (the characters bash still treats specially
/// inside double quotes), and the NodeManager's markers (`<LOG_DIR>`, `<CPS>`, `{{`, `}}`)
/// are split by an empty pair of quotes (`{""{`: bash joins the two quoted halves, the
/// NodeManager sees no marker). Newlines and non-ASCII text pass as they are.
pub fn literal_env_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    for (i, c) in value.char_indices() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
        let rest = &value[i + c.len_utf8()..];
        let splits_marker = match c {
            '{' => rest.starts_with('{'),
            '}' => rest.starts_with('}'),
            '<' => rest.starts_with("LOG_DIR>") || rest.starts_with("CPS>"),
            _ => false,
        };
        if splits_marker {
            out.push_str("\"\"");
        }
    }
    out
}

/// Whether `name` can be an environment variable in the launch script (`export NAME=`):
/// a letter or `_`, then letters, digits and `_`. Anything else breaks the script.
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The NodeManager's `expandEnvironment` on Linux, as in `ContainerLaunch`.
    fn nm_expand(v: &str) -> String {
        v.replace("<LOG_DIR>", "/var/log/c1")
            .replace("<CPS>", ":")
            .replace("{{", "$")
            .replace("}}", "")
    }

    /// What bash exports for `export K="V"` with `V` the NodeManager's expansion of `v`.
    fn through_launch_script(v: &str) -> String {
        let script = format!(
            "export K=\"{}\"\nprintf '%s' \"$K\"",
            nm_expand(&literal_env_value(v))
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("HOME", "/nonexistent")
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn values_reach_the_process_exactly_as_given() {
        for v in [
            "",
            "plain",
            "a b  c",
            "$(echo no) `echo no` $HOME ${HOME} $$ $",
            r#"'single' "double" \ \\ \" \$ "#,
            "line one\nline two\n",
            "non-ASCII: héllo wörld ✓ 日本",
            "{{HOME}} {{{x}}} }} {{",
            "<LOG_DIR>/x <CPS> <LOG_DIR <<LOG_DIR>> <CPS",
            "!! !x ; | & > < * ? [a] ~",
            "ends with a backslash \\",
        ] {
            assert_eq!(through_launch_script(v), v, "{v:?}");
        }
    }

    #[test]
    fn plain_values_are_unchanged() {
        for v in ["info", "http://nm1:4000", "/tmp/yarn-am-staging/app_1", "1"] {
            assert_eq!(literal_env_value(v), v);
        }
    }

    #[test]
    fn only_shell_names_are_environment_names() {
        for ok in ["A", "_", "YARN_AM_LOG", "a1_b"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B", "Ä", "$A", "A\n"] {
            assert!(!is_env_name(bad), "{bad:?}");
        }
    }
}
