//! Loading real files from temporary configuration directories, and fuzz-style
//! properties of the XML reader.

use std::collections::HashMap;
use std::path::Path;

use super::yarn::{RM_HOSTNAME, RM_SCHEDULER_ADDRESS};
use super::*;

fn write(dir: &Path, file: &str, props: &[(&str, &str, bool)]) {
    let body: String = props
        .iter()
        .map(|(n, v, f)| {
            format!("<property><name>{n}</name><value>{v}</value><final>{f}</final></property>\n")
        })
        .collect();
    std::fs::write(
        dir.join(file),
        format!("<?xml version=\"1.0\"?>\n<configuration>\n{body}</configuration>\n"),
    )
    .unwrap();
}

fn env(vars: &[(&str, &Path)]) -> EnvSource {
    EnvSource::Map(
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.display().to_string()))
            .collect(),
    )
}

#[test]
fn loads_site_files_in_order_with_finals() {
    let yarn_dir = tempfile::tempdir().unwrap();
    let hadoop_dir = tempfile::tempdir().unwrap();
    write(
        yarn_dir.path(),
        "core-site.xml",
        &[("only.core", "c", false), ("shared", "yarn-core", false)],
    );
    write(
        yarn_dir.path(),
        "yarn-site.xml",
        &[
            (RM_HOSTNAME, "rm.yarn-dir", false),
            ("locked", "yarn-dir", true),
        ],
    );
    write(
        hadoop_dir.path(),
        "core-site.xml",
        &[("shared", "hadoop-core", false)],
    );
    write(
        hadoop_dir.path(),
        "yarn-site.xml",
        &[
            (RM_HOSTNAME, "rm.hadoop-dir", false),
            ("locked", "hadoop-dir", false),
        ],
    );
    let conf = Configuration::load(
        env(&[
            ("YARN_CONF_DIR", yarn_dir.path()),
            ("HADOOP_CONF_DIR", hadoop_dir.path()),
        ]),
        HashMap::new(),
    )
    .unwrap();
    assert_eq!(conf.get("only.core").unwrap().as_deref(), Some("c"));
    assert_eq!(conf.get("shared").unwrap().as_deref(), Some("hadoop-core"));
    assert_eq!(
        conf.get("locked").unwrap().as_deref(),
        Some("yarn-dir"),
        "final honoured"
    );
    // Later resources override earlier ones, and the default address follows the hostname.
    assert_eq!(
        conf.socket_addr(RM_SCHEDULER_ADDRESS, Some(8030))
            .unwrap()
            .to_string(),
        "rm.hadoop-dir:8030"
    );
    let expected_source = hadoop_dir
        .path()
        .join("yarn-site.xml")
        .display()
        .to_string();
    assert_eq!(conf.source(RM_HOSTNAME), Some(expected_source.as_str()));
}

#[test]
fn missing_dirs_and_files_leave_defaults() {
    let empty = tempfile::tempdir().unwrap();
    let conf = Configuration::load(
        env(&[
            ("HADOOP_CONF_DIR", empty.path()),
            ("YARN_CONF_DIR", &empty.path().join("nope")),
        ]),
        HashMap::new(),
    )
    .unwrap();
    let rm = rm_candidates(&conf, RmService::Scheduler).unwrap();
    assert_eq!(rm[0].address.to_string(), "0.0.0.0:8030");
    let none = Configuration::load(EnvSource::Map(HashMap::new()), HashMap::new()).unwrap();
    assert_eq!(none.get(RM_HOSTNAME).unwrap().as_deref(), Some("0.0.0.0"));
}

#[test]
fn same_dir_in_both_variables_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let e = env(&[
        ("YARN_CONF_DIR", dir.path()),
        ("HADOOP_CONF_DIR", dir.path()),
    ]);
    assert_eq!(conf_dirs(&e), vec![dir.path().to_path_buf()]);
}

#[test]
fn malformed_file_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("yarn-site.xml"),
        "<configuration><property>",
    )
    .unwrap();
    let err =
        Configuration::load(env(&[("HADOOP_CONF_DIR", dir.path())]), HashMap::new()).unwrap_err();
    assert!(matches!(err, ConfError::Malformed { .. }), "{err:?}");
    assert!(err.to_string().contains("yarn-site.xml"), "{err}");
}

#[test]
fn unreadable_file_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where a file should be: unreadable whatever our privileges.
    std::fs::create_dir(dir.path().join("core-site.xml")).unwrap();
    let err =
        Configuration::load(env(&[("HADOOP_CONF_DIR", dir.path())]), HashMap::new()).unwrap_err();
    match &err {
        ConfError::Read { path, .. } => assert!(path.ends_with("core-site.xml")),
        other => panic!("{other:?}"),
    }
    // Not UTF-8 is unreadable too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("yarn-site.xml"), [0xff, 0xfe, 0x00]).unwrap();
    let err =
        Configuration::load(env(&[("HADOOP_CONF_DIR", dir.path())]), HashMap::new()).unwrap_err();
    assert!(matches!(err, ConfError::Read { .. }), "{err:?}");
}

#[test]
fn variable_loop_in_a_file_is_reported_on_read() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "yarn-site.xml",
        &[
            (RM_HOSTNAME, "${loop.a}", false),
            ("loop.a", "${loop.b}", false),
            ("loop.b", "${loop.a}", false),
        ],
    );
    let conf =
        Configuration::load(env(&[("HADOOP_CONF_DIR", dir.path())]), HashMap::new()).unwrap();
    let err = rm_candidates(&conf, RmService::Scheduler).unwrap_err();
    assert!(
        matches!(err, ConfError::SubstitutionDepth { .. }),
        "{err:?}"
    );
}

#[test]
fn env_and_override_expansion_from_files() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "yarn-site.xml",
        &[
            (RM_HOSTNAME, "${env.RM_HOST:-fallback.example}", false),
            ("yarn.app.dir", "/data/${user.name}", false),
        ],
    );
    let mut vars: HashMap<String, String> = HashMap::from([("RM_HOST".into(), "from-env".into())]);
    vars.insert("HADOOP_CONF_DIR".into(), dir.path().display().to_string());
    let conf = Configuration::load(
        EnvSource::Map(vars),
        HashMap::from([("user.name".to_string(), "am".to_string())]),
    )
    .unwrap();
    assert_eq!(
        rm_candidates(&conf, RmService::Client).unwrap()[0]
            .address
            .to_string(),
        "from-env:8032"
    );
    assert_eq!(
        conf.get("yarn.app.dir").unwrap().as_deref(),
        Some("/data/am")
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    /// Strings built from XML-significant fragments reach deeper into the parser than
    /// uniformly random text.
    fn xmlish() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("<configuration>".to_string()),
            Just("</configuration>".to_string()),
            Just("<property>".to_string()),
            Just("</property>".to_string()),
            Just("<name>".to_string()),
            Just("</name>".to_string()),
            Just("<value>".to_string()),
            Just("</value>".to_string()),
            Just("<final>true</final>".to_string()),
            Just("<property name=\"a\" value=\"b\"/>".to_string()),
            Just("<![CDATA[x]]>".to_string()),
            Just("&amp;".to_string()),
            Just("&bogus;".to_string()),
            Just("<!-- c -->".to_string()),
            Just("<?xml version=\"1.0\"?>".to_string()),
            "[a-z${}. <>/&;\"'=]{0,8}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn xml_reader_never_panics_on_any_text(s in any::<String>()) {
            let _ = xml::parse(&s, "fuzz.xml");
        }

        #[test]
        fn xml_reader_never_panics_on_xmlish_text(s in xmlish()) {
            let mut conf = Configuration::new();
            if conf.add_xml(&s, "fuzz.xml").is_ok() {
                let keys: Vec<String> = conf.keys().map(str::to_string).collect();
                for k in keys {
                    let _ = conf.get(&k);
                }
            }
        }

        #[test]
        fn expansion_never_panics(value in "[a-z${}. :\\-]{0,40}", other in "[a-z${}. :\\-]{0,20}") {
            let mut conf = Configuration::new().with_env(EnvSource::Map(HashMap::new()));
            conf.set("a", value);
            conf.set("b", other);
            let _ = conf.get("a");
        }
    }
}
