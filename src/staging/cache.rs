//! Content-addressed staging on HDFS: files every submit ships again (the yarn-am binary, a
//! runtime archive, `--file`s) are kept under `<root>/.cache/<sha256>/<file name>`, so a second
//! submit of the same bytes uploads nothing and, since the URL, size and mtime are then the
//! same, the NodeManagers reuse their PRIVATE localised copy too: its containers start
//! without fetching the binary again.
//!
//! The cache folder is ours alone (mode 700, owner checked as for an app's folder): a file in
//! it is trusted by its name, so nobody else may create one. A new file is written under a
//! temporary name and renamed into place (HDFS's rename is atomic), so a submit that dies
//! mid-upload leaves no half file under a digest's name. Nothing prunes the cache; removing
//! `<root>/.cache` clears it.

use std::io::Read;
use std::path::Path;

use anyhow::Context;
use sha2::{Digest, Sha256};

use super::fs::{FileType, StagingFs};

/// The cache folder's name below the staging root.
pub const CACHE_DIR_NAME: &str = ".cache";
/// The PUBLIC files' folder below the staging root (`--public`): laid out as the cache but
/// readable by all (folders 755, files 644), since the NodeManagers localise a PUBLIC
/// resource once per node for every user. Only its owner can add to it.
pub const PUBLIC_DIR_NAME: &str = ".public";

/// Where a file with this digest and name lives in the cache below `cache`.
pub fn cached_path(cache: &str, digest_hex: &str, name: &str) -> String {
    format!("{}/{digest_hex}/{name}", cache.trim_end_matches('/'))
}

/// The SHA-256 of a local file, in hex (read in 1 MiB pieces: the binary may be large).
pub fn file_digest(path: &Path) -> anyhow::Result<String> {
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("reading {} to stage it", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("reading {} to stage it", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// What the cache holds at `path`: `Some(length)` for a file, `None` when nothing is there.
/// Anything else there (a folder) is an error naming the path.
pub async fn cached_length(fs: &dyn StagingFs, path: &str) -> anyhow::Result<Option<u64>> {
    match fs.status(path).await {
        Ok(Some(st)) if st.kind == FileType::File => Ok(Some(st.length)),
        Ok(Some(_)) => anyhow::bail!(
            "{path} in the staging cache is not a file: remove it (or the whole cache folder) \
             and submit again"
        ),
        Ok(None) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("looking for {path} in the staging cache")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_shows_the_digest_and_keeps_the_name() {
        assert_eq!(
            cached_path("/user/a/.yarn-am-staging/.cache/", "ab12", "yarn-am"),
            "/user/a/.yarn-am-staging/.cache/ab12/yarn-am"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_bytes() {
        let dir = std::env::temp_dir().join(format!("yarn-am-cache-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(
            file_digest(&f).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::write(&f, b"abd").unwrap();
        assert_ne!(
            file_digest(&f).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let missing = file_digest(&dir.join("missing")).unwrap_err();
        assert!(format!("{missing:#}").contains("missing"), "{missing:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
