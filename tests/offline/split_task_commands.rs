//! The tasks the inputs' splits make, run and timed outside the sans-IO core (which reads
//! no clock and touches no file): each placeholder is one shell word in a real shell,
//! and a large input splits in bounded time.

use yarn_am_core::inputs::split::{split_all, task_for, Block, InputFile, Split, MAX_SPLITS};
use yarn_am_core::inputs::{InputsSpec, SplitBy};

/// Audit M1: a placeholder is one shell word whatever the file name holds; a name cannot
/// run a command (on the old code `{split.path}` was pasted in raw).
#[test]
fn placeholders_expand_to_one_shell_word_each() {
    let spec: InputsSpec = serde_json::from_str(
        r#"{"paths":["/d/*"],"command":"printf '<%s>' {split.path} {split.index}; echo"}"#,
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("yarn-am-m1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "/d/a;exit 7;b.txt",
        "/d/x;touch PWNED;#",
        "/d/x';touch PWNED;'",
        "/d/$(touch PWNED) `touch PWNED` \"{split.index}\"",
        "/d/a\nb {split.path}",
    ] {
        let split = Split {
            path: name.into(),
            offset: 0,
            length: 1,
            hosts: vec![],
        };
        let t = task_for(&spec, 3, &split, "http://rm:9870");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&t.command)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", t.command);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("<{name}><3>\n"),
            "{}",
            t.command
        );
        assert!(!dir.join("PWNED").exists(), "{}", t.command);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 100k blocks (a 400 GB input in 4 MB blocks) split in bounded time: the per-split
/// host choice is a binary search, not a scan (the figure is in BENCHMARKS.md).
#[test]
fn a_hundred_thousand_blocks_split_quickly() {
    let hosts = ["nm1", "nm2", "nm3"];
    let n = 100_000u64;
    let b: Vec<Block> = (0..n)
        .map(|i| Block {
            offset: i * 4,
            length: 4,
            hosts: vec![
                hosts[(i % 3) as usize].into(),
                hosts[((i + 1) % 3) as usize].into(),
            ],
        })
        .collect();
    let f = InputFile {
        path: "/d/f".into(),
        length: n * 4,
    };
    let t0 = std::time::Instant::now();
    let s = split_all([(&f, b.as_slice())], SplitBy::Block, None, MAX_SPLITS).unwrap();
    let spec: InputsSpec = serde_json::from_str(r#"{"paths":["/d"],"command":"wc -l"}"#).unwrap();
    let tasks: Vec<_> = s
        .iter()
        .enumerate()
        .map(|(i, s)| task_for(&spec, i, s, "http://rm:9870"))
        .collect();
    eprintln!("100k blocks: split and made tasks in {:?}", t0.elapsed());
    assert_eq!(tasks.len(), n as usize);
    assert_eq!(tasks[5].preferred_hosts, ["nm1", "nm3"]);
    let s = split_all([(&f, b.as_slice())], SplitBy::Size, Some(400), MAX_SPLITS).unwrap();
    assert_eq!(s.len(), 1000);
}
