//! Staging into a local folder, and against a scripted NameNode.

mod local {
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use yarn_client::http_auth::HttpAuth;

    use crate::staging::{StagingDir, StagingOptions, StagingRoot};

    #[tokio::test]
    async fn local_staging_copies_and_removes() {
        let root =
            std::env::temp_dir().join(format!("yarn-am-staging-test-{}", std::process::id()));
        let opts = StagingOptions {
            webhdfs: None,
            hdfs_uri: None,
            root: Some(root.display().to_string()),
            user: "u".into(),
            auth: HttpAuth::simple("u"),
            timeout: Duration::from_secs(5),
        };
        let mut s = StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0001")
            .await
            .unwrap();
        let f = s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap();
        assert!(f.url.starts_with("file:///"), "{}", f.url);
        assert_eq!(f.size, 2);
        let dir = s.dir();
        assert!(matches!(&dir, StagingDir::Local { path } if path.ends_with("application_1_0001")));
        crate::staging::remove_folder(&dir, None).await;
        assert!(!root.join("application_1_0001").exists());
        crate::staging::remove_folder(&dir, None).await; // already gone: no panic, no error
        std::fs::remove_dir_all(&root).unwrap();
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn local_opts(root: &Path) -> StagingOptions {
        StagingOptions {
            webhdfs: None,
            hdfs_uri: None,
            root: Some(root.display().to_string()),
            user: "u".into(),
            timeout: Duration::from_secs(5),
            auth: HttpAuth::simple("u"),
        }
    }

    /// A scratch root under the system temp dir, fresh per test.
    fn scratch(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!(
            "yarn-am-staging-{name}-{}-{}",
            std::process::id(),
            rand::random::<u32>()
        ));
        assert!(!p.exists());
        p
    }

    #[tokio::test]
    async fn local_staging_is_private() {
        let root = scratch("modes");
        let mut s = StagingRoot::open(&local_opts(&root))
            .await
            .unwrap()
            .app_folder("application_1_0003")
            .await
            .unwrap();
        assert_eq!(mode(&root), 0o700, "a root we create is ours alone");
        let dir = PathBuf::from(s.path());
        assert_eq!(mode(&dir), 0o700);
        s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap();
        assert_eq!(mode(&dir.join("spec.json")), 0o600);
        // The running binary stands in for yarn-am: it must stay executable.
        let exe = std::env::current_exe().unwrap();
        s.put_file(&exe, "yarn-am").await.unwrap();
        assert_eq!(mode(&dir.join("yarn-am")), 0o700);
        let data = root.join("data.txt");
        std::fs::write(&data, "x").unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o644)).unwrap();
        s.put_file(&data, "data.txt").await.unwrap();
        assert_eq!(mode(&dir.join("data.txt")), 0o600);
        // A name staged twice is refused rather than overwritten.
        let e = s.put_bytes("spec.json", b"{}".to_vec()).await.unwrap_err();
        assert!(format!("{e:#}").contains("spec.json"), "{e:#}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn a_planted_app_folder_or_link_is_refused_and_never_removed() {
        let root = scratch("planted");
        let opts = local_opts(&root);
        StagingRoot::open(&opts).await.unwrap();
        // Someone else's folder, made ready for our next application.
        let victim = root.join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("precious"), "x").unwrap();
        std::os::unix::fs::symlink(&victim, root.join("application_1_0004")).unwrap();
        let e = StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0004")
            .await
            .err()
            .unwrap();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("application_1_0004 already exists; refusing to use a folder"),
            "{msg}"
        );
        // Plain folders already there are refused the same way.
        std::fs::create_dir(root.join("application_1_0005")).unwrap();
        assert!(StagingRoot::open(&opts)
            .await
            .unwrap()
            .app_folder("application_1_0005")
            .await
            .is_err());
        // The AM asked to remove a folder that became a link leaves it (and its target).
        let dir = StagingDir::Local {
            path: root.join("application_1_0004").display().to_string(),
        };
        crate::staging::remove_folder(&dir, None).await;
        assert!(victim.join("precious").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[tokio::test]
    async fn an_unsafe_local_root_is_refused_naming_it() {
        let base = scratch("roots");
        std::fs::create_dir(&base).unwrap();
        let open = |root: PathBuf| async move {
            match StagingRoot::open(&local_opts(&root)).await {
                Ok(_) => String::new(),
                Err(e) => format!("{e:#}"),
            }
        };
        let shared = base.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let msg = open(shared.clone()).await;
        assert!(
            msg.contains(&format!(
                "{} can be changed by other users",
                shared.display()
            )),
            "{msg}"
        );
        let link = base.join("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        let msg = open(link.clone()).await;
        assert!(
            msg.contains(&format!("{} is a symbolic link", link.display())),
            "{msg}"
        );
        let file = base.join("file");
        std::fs::write(&file, "").unwrap();
        let msg = open(file.clone()).await;
        assert!(
            msg.contains(&format!("{} is not a folder", file.display())),
            "{msg}"
        );
        // Sticky and world-writable, like /tmp: fine.
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(open(shared).await, "");
        std::fs::remove_dir_all(&base).unwrap();
    }
}

/// Audit L3 against a scripted NameNode: an app folder that someone else created is refused
/// before anything is staged, and staged files are created with mode 600.
mod hdfs {
    use std::time::Duration;

    use yarn_client::http_auth::HttpAuth;

    use crate::staging::{StagingError, StagingOptions, StagingRoot};
    use yarn_client::test_http::{reply, serve, Seen};

    const APP: &str = "application_1_0001";

    /// A NameNode (and DataNode, same address) whose app folder has `owner` and `mode`.
    async fn namenode(owner: &'static str, mode: &'static str) -> (String, Seen) {
        serve("127.0.0.1", move |head| {
            let line = head.lines().next().unwrap_or_default();
            let host = head
                .lines()
                .find_map(|l| l.strip_prefix("host: "))
                .unwrap_or_default();
            let json = |body: String| reply("200 OK", "", &body);
            if line.contains("op=GETHOMEDIRECTORY") {
                json(r#"{"Path":"/user/alice"}"#.into())
            } else if line.contains("op=MKDIRS") {
                json(r#"{"boolean":true}"#.into())
            } else if line.contains("op=CREATE") && !line.contains("/dn/") {
                json(format!(
                    r#"{{"Location":"http://{host}/dn/f?op=CREATE&namenoderpcaddress=nn:8020"}}"#
                ))
            } else if line.contains("/dn/") {
                reply("201 Created", "", "")
            } else if line.contains(&format!("{APP}?op=GETFILESTATUS")) {
                json(format!(
                    r#"{{"FileStatus":{{"length":0,"modificationTime":1,"type":"DIRECTORY","owner":"{owner}","permission":"{mode}"}}}}"#
                ))
            } else if line.contains("op=GETFILESTATUS") {
                json(r#"{"FileStatus":{"length":1,"modificationTime":1,"type":"FILE","owner":"alice","permission":"600"}}"#.into())
            } else {
                reply("400 Bad Request", "", "{}")
            }
        })
        .await
    }

    fn opts(nn: &str) -> StagingOptions {
        StagingOptions {
            webhdfs: Some(nn.to_string()),
            hdfs_uri: Some("hdfs://nn:8020".into()),
            root: Some("/shared/staging".into()),
            user: "alice".into(),
            auth: HttpAuth::simple("alice"),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn an_app_folder_created_by_someone_else_is_refused_before_staging() {
        for (owner, mode) in [("mallory", "700"), ("alice", "777"), ("alice", "755")] {
            let (nn, seen) = namenode(owner, mode).await;
            let root = StagingRoot::open(&opts(&nn)).await.unwrap();
            let e = match root.app_folder(APP).await {
                Err(e) => e,
                Ok(_) => panic!("a folder owned by {owner} with mode {mode} was accepted"),
            };
            let shown = format!("{e:#}");
            assert!(
                matches!(e.downcast_ref(), Some(StagingError::NotOurs { .. })),
                "{shown}"
            );
            assert!(
                shown.contains(&format!("owned by {owner} with mode {mode}")),
                "{shown}"
            );
            assert!(
                shown.contains("expected a folder owned by alice with mode 700"),
                "{shown}"
            );
            let heads = seen.lock().unwrap();
            assert!(!heads.iter().any(|h| h.contains("op=CREATE")), "{heads:?}");
        }
    }

    #[tokio::test]
    async fn our_folder_is_used_and_secrets_are_created_with_mode_600() {
        let (nn, seen) = namenode("alice", "700").await;
        let root = StagingRoot::open(&opts(&nn)).await.unwrap();
        let mut stager = root.app_folder(APP).await.unwrap();
        stager
            .put_bytes("yarn-am.keytab", b"k".to_vec())
            .await
            .unwrap();
        let heads = seen.lock().unwrap();
        let create = heads
            .iter()
            .find(|h| h.contains("yarn-am.keytab?op=CREATE"))
            .expect("a CREATE of the keytab");
        assert!(create.contains("&permission=600"), "{create}");
        let mkdirs = heads
            .iter()
            .find(|h| h.contains(&format!("{APP}?op=MKDIRS")));
        assert!(
            mkdirs.is_some_and(|h| h.contains("permission=700")),
            "{heads:?}"
        );
    }
}
