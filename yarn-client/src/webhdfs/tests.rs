use super::*;

fn client() -> WebHdfs {
    WebHdfs::new("rm:9870", "alice", Duration::from_secs(5)).unwrap()
}

#[test]
fn addresses_in_every_spelling_become_one_base() {
    for a in [
        "rm:9870",
        "http://rm:9870",
        "http://rm:9870/",
        "webhdfs://rm:9870",
        "http://rm:9870/webhdfs/v1",
        "http://rm:9870/webhdfs/v1/",
    ] {
        assert_eq!(normalize_base(a).unwrap(), "http://rm:9870", "{a}");
    }
    assert_eq!(
        normalize_base("swebhdfs://nn:9871").unwrap(),
        "https://nn:9871"
    );
    assert!(matches!(
        normalize_base("hdfs://rm:8020"),
        Err(WebHdfsError::BadAddress { .. })
    ));
    assert!(normalize_base("http://rm:9870/other").is_err());
    assert!(normalize_base("http://").is_err());
}

#[test]
fn op_urls_encode_path_and_user() {
    let c = client();
    assert_eq!(
        c.op_url("/user/alice/x", "GETFILESTATUS", &[]).unwrap(),
        "http://rm:9870/webhdfs/v1/user/alice/x?op=GETFILESTATUS&user.name=alice"
    );
    assert_eq!(
        c.op_url("/a b/c%d", "DELETE", &[("recursive", "true")])
            .unwrap(),
        "http://rm:9870/webhdfs/v1/a%20b/c%25d?op=DELETE&user.name=alice&recursive=true"
    );
    let odd = WebHdfs::new("rm:9870", "x y&z", Duration::from_secs(1)).unwrap();
    assert!(odd
        .op_url("/", "GETHOMEDIRECTORY", &[])
        .unwrap()
        .ends_with("user.name=x%20y%26z"));
}

#[test]
fn relative_and_dotted_paths_are_refused_before_any_request() {
    let c = client();
    for p in ["rel/path", "", "/a//b", "/a/../b", "/./a"] {
        assert!(
            matches!(
                c.op_url(p, "MKDIRS", &[]),
                Err(WebHdfsError::BadPath { .. })
            ),
            "{p:?}"
        );
    }
    assert!(c.op_url("/", "GETFILESTATUS", &[]).is_ok());
    assert!(c.op_url("/a/b/", "GETFILESTATUS", &[]).is_ok());
}

#[test]
fn remote_exceptions_keep_the_java_class_and_message() {
    // As Hadoop 3.4.1's NameNode answers GETFILESTATUS for a missing path.
    let body = r#"{"RemoteException":{"exception":"FileNotFoundException","javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /user/root/t/nope"}}"#;
    let e = error_from_reply("GETFILESTATUS", "/user/root/t/nope", "u", 404, body);
    assert!(e.is_not_found());
    match &e {
        WebHdfsError::Remote {
            exception,
            java_class,
            message,
            status,
            ..
        } => {
            assert_eq!(exception, "FileNotFoundException");
            assert_eq!(java_class, FILE_NOT_FOUND);
            assert_eq!(message, "File does not exist: /user/root/t/nope");
            assert_eq!(*status, 404);
        }
        other => panic!("{other:?}"),
    }
    let shown = e.to_string();
    assert!(shown.contains("GETFILESTATUS /user/root/t/nope"), "{shown}");
    assert!(
        shown.contains("java.io.FileNotFoundException: File does not exist"),
        "{shown}"
    );

    let bad_op = r#"{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"Invalid value for webhdfs parameter \"op\": FOO is not a valid PUT operation."}}"#;
    let e = error_from_reply("MKDIRS", "/x", "u", 400, bad_op);
    assert!(!e.is_not_found());
    assert!(e.to_string().contains("java.lang.IllegalArgumentException"));
}

#[test]
fn non_json_error_bodies_keep_status_and_url() {
    let e = error_from_reply(
        "MKDIRS",
        "/x",
        "http://rm:9870/webhdfs/v1/x",
        502,
        "<html>Bad gateway</html>",
    );
    match &e {
        WebHdfsError::Status {
            status, url, body, ..
        } => {
            assert_eq!(*status, 502);
            assert!(url.as_str().contains("rm:9870"));
            assert!(body.contains("Bad gateway"));
        }
        other => panic!("{other:?}"),
    }
    assert!(parse_remote_exception("{}").is_none());
    assert!(parse_remote_exception("not json").is_none());
}

#[test]
fn file_status_parses_namenode_json() {
    let body = r#"{"FileStatus":{"accessTime":1795311896593,"blockSize":134217728,"childrenNum":0,"fileId":16389,"group":"supergroup","length":11,"modificationTime":1795311897243,"owner":"root","pathSuffix":"","permission":"644","replication":1,"storagePolicy":0,"type":"FILE"}}"#;
    let s: FileStatus = WebHdfs::json("GETFILESTATUS", "u", body, "FileStatus").unwrap();
    assert_eq!(s.length, 11);
    assert_eq!(s.modification_time, 1795311897243);
    assert_eq!(s.kind, FileType::File);
    assert_eq!(s.owner, "root");
    let err =
        WebHdfs::json::<FileStatus>("GETFILESTATUS", "u", r#"{"x":1}"#, "FileStatus").unwrap_err();
    assert!(matches!(err, WebHdfsError::BadReply { .. }));
}

#[test]
fn the_namenode_rpc_address_comes_from_the_datanode_url() {
    // A Location as Hadoop 3.4.1's NameNode returns it for CREATE with noredirect=true.
    let loc = "http://rm:9864/webhdfs/v1/user/root/t/f?op=CREATE&user.name=root&namenoderpcaddress=rm:8020&createflag=&createparent=true&overwrite=true";
    assert_eq!(
        query_param(loc, "namenoderpcaddress").as_deref(),
        Some("rm:8020")
    );
    assert_eq!(query_param(loc, "createflag").as_deref(), Some(""));
    assert_eq!(query_param(loc, "missing"), None);
    assert_eq!(
        query_param("http://x/?a=b%3Ac", "a").as_deref(),
        Some("b:c")
    );
    // Broken escapes pass through as they are; multi-byte UTF-8 decodes.
    assert_eq!(decode("50%zz%4"), "50%zz%4");
    assert_eq!(decode("caf%C3%A9+x"), "café x");
}
