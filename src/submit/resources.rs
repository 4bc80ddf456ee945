//! What `--file` and `--archive` name: `PATH[#NAME]`, a local file uploaded (through the
//! content-addressed cache when staging on HDFS) or an `hdfs://` file referenced in place,
//! under NAME (default: the file's own name) in every executor's working directory. An
//! archive is unpacked there by the NodeManager into a folder called NAME, as Spark's and
//! MapReduce's `--archives` are.

use std::path::PathBuf;

use crate::staging::ResourceKind;

/// A `--file` or `--archive` argument that cannot be shipped.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResourceArgError {
    #[error("{flag} {arg:?}: no file named (want PATH or PATH#NAME)")]
    NoPath { flag: &'static str, arg: String },
    #[error(
        "{flag} {arg:?}: {name:?} cannot name a file in the container's working directory \
         (a relative path: not empty, no empty, '.' or '..' part)"
    )]
    BadName {
        flag: &'static str,
        arg: String,
        name: String,
    },
    #[error("{flag} {arg:?}: {name} is the name yarn-am gives its own {what}")]
    Reserved {
        flag: &'static str,
        arg: String,
        name: String,
        what: &'static str,
    },
    #[error("{flag} {arg:?}: only hdfs:// URLs (or local paths) can be shipped, not {scheme}://")]
    Scheme {
        flag: &'static str,
        arg: String,
        scheme: String,
    },
    #[error(
        "{name:?} is shipped twice ({first:?} and {second:?}): give one of them another #NAME"
    )]
    Twice {
        name: String,
        first: String,
        second: String,
    },
    #[error("--public without a --file or --archive to make public")]
    PublicOfNothing,
    #[error(
        "--public {arg:?}: {path} has mode {mode:o}, which others cannot read: a PUBLIC \
         resource is served to every user of each node, so a private file is refused (make it \
         world-readable, chmod o+r, if it is meant for everyone; else drop --public)"
    )]
    PublicButPrivate {
        arg: String,
        path: String,
        mode: u32,
    },
    #[error(
        "--public {arg:?}: {path} is the --keytab; a keytab is never shipped as a PUBLIC \
         resource (yarn-am stages it for the AM alone)"
    )]
    PublicKeytab { arg: String, path: String },
    #[error("{file:?} ({file_arg:?}) is also a folder of {inner:?} ({inner_arg:?}): rename one")]
    FileAndFolder {
        file: String,
        file_arg: String,
        inner: String,
        inner_arg: String,
    },
}

/// Where a shipped resource's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A local file, uploaded at submit.
    Local(PathBuf),
    /// A file already on HDFS: the URL as given (YARN resolves it) and its path (for its
    /// size and mtime through WebHDFS).
    Hdfs { url: String, path: String },
}

/// One `--file`/`--archive` argument, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedResource {
    pub source: Source,
    /// The name in the container's working directory.
    pub name: String,
    pub kind: ResourceKind,
    /// The argument as given, for messages.
    pub arg: String,
}

/// Names `submit` gives files of its own in the containers.
const RESERVED: [(&str, &str); 7] = [
    (crate::submit::BINARY_NAME, "binary"),
    (crate::submit::COMMAND_FILE, "executor command's script"),
    (
        crate::submit::DRIVER_COMMAND_FILE,
        "driver command's script",
    ),
    (
        yarn_am_wire::driver_process::SECRET_FILE,
        "driver's secret file",
    ),
    (
        yarn_am_wire::driver_process::DIAGNOSTICS_FILE,
        "driver's diagnostics file",
    ),
    (crate::submit::CA_FILE, "copy of the cluster's CA file"),
    (yarn_am_wire::spec::SPEC_FILE, "application spec"),
];

/// Whether `name` can be a link in the container's working directory: a relative path
/// without empty, `.` or `..` parts. A name with folders (`__spark_libs__/a.jar`, as Spark's
/// YARN client names each jar of `spark.yarn.jars`) is fine: the NodeManager's launch script
/// makes the folders (`mkdir -p`) before it links the file.
fn valid_link_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Parses `PATH[#NAME]` of `flag` (`--file` or `--archive`).
pub fn parse(flag: &'static str, arg: &str) -> Result<ShippedResource, ResourceArgError> {
    let kind = if flag == "--archive" {
        ResourceKind::Archive
    } else {
        ResourceKind::File
    };
    let (location, alias) = match arg.rsplit_once('#') {
        Some((l, a)) => (l, Some(a)),
        None => (arg, None),
    };
    if location.is_empty() {
        return Err(ResourceArgError::NoPath {
            flag,
            arg: arg.into(),
        });
    }
    let source = match location.split_once("://") {
        Some(("hdfs", rest)) => {
            // hdfs://authority/path, or hdfs:///path for the default file system.
            let path = rest.find('/').map(|i| &rest[i..]).unwrap_or("");
            if path.len() <= 1 {
                return Err(ResourceArgError::NoPath {
                    flag,
                    arg: arg.into(),
                });
            }
            Source::Hdfs {
                url: location.to_string(),
                path: path.to_string(),
            }
        }
        Some((scheme, _)) if scheme.chars().all(|c| c.is_ascii_alphanumeric()) => {
            return Err(ResourceArgError::Scheme {
                flag,
                arg: arg.into(),
                scheme: scheme.into(),
            })
        }
        _ => Source::Local(PathBuf::from(location)),
    };
    let default_name = location
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("");
    let name = alias.unwrap_or(default_name).to_string();
    if !valid_link_name(&name) {
        return Err(ResourceArgError::BadName {
            flag,
            arg: arg.into(),
            name,
        });
    }
    if let Some((_, what)) = RESERVED.iter().find(|(n, _)| *n == name) {
        return Err(ResourceArgError::Reserved {
            flag,
            arg: arg.into(),
            name,
            what,
        });
    }
    Ok(ShippedResource {
        source,
        name,
        kind,
        arg: arg.into(),
    })
}

/// Every `--file` then every `--archive`, parsed; two under one name are refused.
pub fn parse_all(
    files: &[String],
    archives: &[String],
) -> Result<Vec<ShippedResource>, ResourceArgError> {
    let mut out: Vec<ShippedResource> = Vec::new();
    let all = files
        .iter()
        .map(|f| ("--file", f))
        .chain(archives.iter().map(|a| ("--archive", a)));
    for (flag, arg) in all {
        let r = parse(flag, arg)?;
        if let Some(first) = out.iter().find(|o| o.name == r.name) {
            return Err(ResourceArgError::Twice {
                name: r.name,
                first: first.arg.clone(),
                second: r.arg,
            });
        }
        let inside = |dir: &ShippedResource, f: &ShippedResource| {
            f.name
                .strip_prefix(dir.name.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        };
        for o in &out {
            let (file, inner) = if inside(o, &r) {
                (o, &r)
            } else if inside(&r, o) {
                (&r, o)
            } else {
                continue;
            };
            return Err(ResourceArgError::FileAndFolder {
                file: file.name.clone(),
                file_arg: file.arg.clone(),
                inner: inner.name.clone(),
                inner_arg: inner.arg.clone(),
            });
        }
        out.push(r);
    }
    Ok(out)
}

/// Checks what `--public` would serve to every user of the cluster's nodes. A local file must
/// already be readable by others here (mode o+r): a file only its owner reads (a key, a
/// credentials file) is taken for a secret and refused rather than published; the `--keytab`
/// itself is refused whatever its mode. `hdfs://` files are checked at staging, against
/// their HDFS permissions ([`crate::staging::Stager::reference_hdfs`]). yarn-am's own files
/// (spec, keytab, tokens, scripts) never become PUBLIC: `--public` applies to `--file` and
/// `--archive` only.
pub fn check_public(
    shipped: &[ShippedResource],
    keytab: Option<&std::path::Path>,
) -> Result<(), ResourceArgError> {
    use std::os::unix::fs::PermissionsExt;
    if shipped.is_empty() {
        return Err(ResourceArgError::PublicOfNothing);
    }
    let keytab = keytab.and_then(|k| std::fs::canonicalize(k).ok());
    for r in shipped {
        let Source::Local(path) = &r.source else {
            continue;
        };
        // A file that cannot be read fails later with its own message, at staging.
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        if keytab.is_some() && std::fs::canonicalize(path).ok() == keytab {
            return Err(ResourceArgError::PublicKeytab {
                arg: r.arg.clone(),
                path: path.display().to_string(),
            });
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o004 == 0 {
            return Err(ResourceArgError::PublicButPrivate {
                arg: r.arg.clone(),
                path: path.display().to_string(),
                mode,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_path_keeps_its_name_unless_aliased() {
        let r = parse("--file", "/tmp/data/input.txt").unwrap();
        assert_eq!(r.source, Source::Local("/tmp/data/input.txt".into()));
        assert_eq!((r.name.as_str(), r.kind), ("input.txt", ResourceKind::File));
        let r = parse("--archive", "rel/spark-jars.zip#jars").unwrap();
        assert_eq!(r.source, Source::Local("rel/spark-jars.zip".into()));
        assert_eq!((r.name.as_str(), r.kind), ("jars", ResourceKind::Archive));
    }

    #[test]
    fn an_hdfs_url_is_referenced_with_its_path() {
        let r = parse("--archive", "hdfs://nn:8020/apps/spark/jars.zip#__spark__").unwrap();
        assert_eq!(
            r.source,
            Source::Hdfs {
                url: "hdfs://nn:8020/apps/spark/jars.zip".into(),
                path: "/apps/spark/jars.zip".into()
            }
        );
        assert_eq!(r.name, "__spark__");
        let r = parse("--file", "hdfs:///shared/lookup.csv").unwrap();
        assert_eq!(
            r.source,
            Source::Hdfs {
                url: "hdfs:///shared/lookup.csv".into(),
                path: "/shared/lookup.csv".into()
            }
        );
        assert_eq!(r.name, "lookup.csv");
    }

    #[test]
    fn bad_arguments_name_what_is_wrong() {
        let cases = [
            ("--file", "", "no file named"),
            ("--file", "#x", "no file named"),
            ("--file", "hdfs://nn:8020", "no file named"),
            ("--file", "a.txt#", "cannot name a file"),
            ("--file", "a.txt#../x", "cannot name a file"),
            ("--file", "a.txt#..", "cannot name a file"),
            ("--file", "a.txt#/abs/x", "cannot name a file"),
            ("--file", "a.txt#lib//x", "cannot name a file"),
            ("--file", "a.txt#lib/./x", "cannot name a file"),
            ("--file", "a.txt#lib/", "cannot name a file"),
            ("--file", "a.txt#yarn-am", "its own binary"),
            (
                "--archive",
                "x.zip#yarn-am-command.sh",
                "executor command's script",
            ),
            ("--file", "s3a://bucket/x", "not s3a://"),
        ];
        for (flag, arg, want) in cases {
            let e = parse(flag, arg).unwrap_err().to_string();
            assert!(e.contains(want), "{flag} {arg:?}: {e}");
            assert!(e.contains(flag), "{e}");
        }
    }

    #[test]
    fn a_name_may_hold_folders_as_spark_names_its_jars() {
        let r = parse("--file", "/opt/jars/a.jar#__spark_libs__/a.jar").unwrap();
        assert_eq!(r.name, "__spark_libs__/a.jar");
        let all = parse_all(
            &[
                "/opt/jars/a.jar#__spark_libs__/a.jar".into(),
                "hdfs:///jars/b.jar#__spark_libs__/b.jar".into(),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(all.len(), 2);
        // A link cannot be a file and a folder at once.
        let e = parse_all(
            &[
                "x.zip#__spark_libs__".into(),
                "a.jar#__spark_libs__/a.jar".into(),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("also a folder"), "{e}");
        let e = parse_all(&["a.jar#lib/a.jar".into()], &["x.zip#lib".into()]).unwrap_err();
        assert!(e.to_string().contains("also a folder"), "{e}");
        assert!(parse_all(&["a.jar#lib/a.jar".into(), "b#libx".into()], &[]).is_ok());
    }

    #[test]
    fn two_resources_under_one_name_are_refused() {
        let e = parse_all(&["a/x.txt".into()], &["b/y.zip#x.txt".into()]).unwrap_err();
        assert!(e.to_string().contains("shipped twice"), "{e}");
        let ok = parse_all(&["a/x.txt".into()], &["b/x.txt.zip".into()]).unwrap();
        assert_eq!(ok.len(), 2);
    }

    #[test]
    fn public_refuses_private_files_and_the_keytab() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("yarn-am-public-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let open = dir.join("lookup.csv");
        let secret = dir.join("creds.json");
        let keytab = dir.join("alice.keytab");
        for (f, mode) in [(&open, 0o644), (&secret, 0o600), (&keytab, 0o644)] {
            std::fs::write(f, b"x").unwrap();
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let arg = |p: &std::path::Path| p.display().to_string();
        let ok = parse_all(
            &[arg(&open), "hdfs:///shared/x.csv".into()],
            &[format!("{}#k", arg(&keytab))],
        )
        .unwrap();
        // The keytab's mode is 644 here: refused for being the keytab, not for its mode.
        assert!(check_public(&ok, None).is_ok());
        let e = check_public(&ok, Some(&keytab)).unwrap_err();
        assert!(matches!(e, ResourceArgError::PublicKeytab { .. }), "{e}");
        assert!(e.to_string().contains("never shipped"), "{e}");
        let e = check_public(&parse_all(&[arg(&secret)], &[]).unwrap(), None).unwrap_err();
        assert!(
            matches!(e, ResourceArgError::PublicButPrivate { mode: 0o600, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("chmod o+r"), "{e}");
        assert_eq!(
            check_public(&[], None).unwrap_err(),
            ResourceArgError::PublicOfNothing
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
