//! Whether the NodeManagers will accept a file as a PUBLIC resource (`--public`).

use anyhow::{bail, Context};

use super::fs::StagingFs;

/// What keeps the NodeManager from localising the HDFS file `path` as PUBLIC, as its
/// `FSDownload.isPublic` decides: the file must be readable by others and every folder
/// above it, `/` included, searchable (`x`) by others. `modes` are the octal permissions
/// WebHDFS reports, the file's first, then its folders from the nearest up to `/`.
/// `None` when all is well.
pub(super) fn public_refusal(path: &str, modes: &[(String, String)]) -> Option<String> {
    let others = |m: &str| u32::from_str_radix(m, 8).map(|v| v & 0o7).unwrap_or(0);
    let (file, file_mode) = modes.first()?;
    if others(file_mode) & 0o4 == 0 {
        return Some(format!(
            "{file} has mode {file_mode}: others cannot read it, so a NodeManager refuses it \
             as a PUBLIC resource (fix: hdfs dfs -chmod o+r {file})"
        ));
    }
    for (dir, mode) in &modes[1..] {
        if others(mode) & 0o1 == 0 {
            return Some(format!(
                "{dir} has mode {mode}: others cannot enter it, so a NodeManager refuses \
                 {path} below it as a PUBLIC resource (fix: hdfs dfs -chmod o+x {dir}, or \
                 a --staging-dir whose folders all allow o+x)"
            ));
        }
    }
    None
}

/// The folders above the absolute path `path`, nearest first, `/` last.
pub(super) fn ancestors(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = path.trim_end_matches('/');
    while let Some((parent, _)) = p.rsplit_once('/') {
        out.push(if parent.is_empty() { "/" } else { parent }.to_string());
        p = parent;
    }
    out
}

/// Fails with what to fix when the NodeManager would refuse `path` as a PUBLIC resource
/// ([`public_refusal`]): one status call per folder above it.
pub(super) async fn check_public(fs: &dyn StagingFs, path: &str) -> anyhow::Result<()> {
    let mut modes = Vec::new();
    for p in std::iter::once(path.to_string()).chain(ancestors(path)) {
        let what = || format!("reading the permissions of {p} through WebHDFS");
        let st = fs
            .status(&p)
            .await
            .with_context(what)?
            .with_context(|| format!("{}: not found", what()))?;
        modes.push((p, st.permission));
    }
    match public_refusal(path, &modes) {
        Some(why) => bail!(why),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_run_from_the_parent_up_to_the_root() {
        assert_eq!(
            ancestors("/user/a/.yarn-am-staging/.public/ab/x.zip"),
            [
                "/user/a/.yarn-am-staging/.public/ab",
                "/user/a/.yarn-am-staging/.public",
                "/user/a/.yarn-am-staging",
                "/user/a",
                "/user",
                "/"
            ]
        );
        assert_eq!(ancestors("/x"), ["/"]);
    }

    #[test]
    fn a_public_file_needs_others_read_and_every_folder_above_others_x() {
        let modes = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(p, m)| (p.to_string(), m.to_string()))
                .collect()
        };
        let ok = modes(&[
            ("/s/.public/d/f", "644"),
            ("/s/.public/d", "755"),
            ("/", "1777"),
        ]);
        assert_eq!(public_refusal("/s/.public/d/f", &ok), None);
        // Others' execute bit alone (711) is enough for a folder, as for the NodeManager.
        let ok = modes(&[("/s/f", "604"), ("/s", "711"), ("/", "755")]);
        assert_eq!(public_refusal("/s/f", &ok), None);
        let unreadable = modes(&[("/s/f", "640"), ("/s", "755"), ("/", "755")]);
        let why = public_refusal("/s/f", &unreadable).unwrap();
        assert!(
            why.contains("/s/f has mode 640") && why.contains("chmod o+r /s/f"),
            "{why}"
        );
        let closed = modes(&[
            ("/u/a/s/f", "644"),
            ("/u/a/s", "755"),
            ("/u/a", "750"),
            ("/u", "755"),
        ]);
        let why = public_refusal("/u/a/s/f", &closed).unwrap();
        assert!(
            why.contains("/u/a has mode 750") && why.contains("chmod o+x /u/a"),
            "{why}"
        );
    }
}
