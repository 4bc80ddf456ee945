//! Folders only this user can read, in places other users may write to (`/tmp`).
//!
//! Local staging and the secret folder live in such places. What goes wrong there without
//! care: another user plants a symbolic link where our next folder will be (we would write
//! our files where they point, and later delete what they point to), or creates the folder
//! first (and reads what we put in it), or owns the parent and swaps our folder for a link
//! between our check and our use. So:
//!
//! - a folder we own is made with `mkdir` itself (exclusive: an existing path, link or not,
//!   is refused), mode 0700, and checked with `lstat`, which never follows a link;
//! - a parent we put it in must be a real folder (not a link) that only we can change, or a
//!   sticky one (like `/tmp`: others may add entries but not rename or remove ours);
//! - a folder is removed only after `lstat` shows it is still our real folder.
//!
//! Errors name the path and what is wrong with it.

use std::fs::{DirBuilder, Metadata};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

use thiserror::Error;

/// Why a path is not safe to use.
#[derive(Debug, Error)]
pub enum Unsafe {
    #[error("{path} is a symbolic link; refusing to follow it")]
    Link { path: String },
    #[error("{path} is not a folder")]
    NotDir { path: String },
    #[error("{path} is owned by uid {owner}, not by this user (uid {me})")]
    Owner { path: String, owner: u32, me: u32 },
    #[error(
        "{path} can be changed by other users (mode {mode:o}) and is not sticky: they could \
         swap what we put in it; use a folder only you can write to"
    )]
    Writable { path: String, mode: u32 },
    #[error("{path} already exists; refusing to use a folder this run did not create")]
    Exists { path: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Unsafe + 'a {
    move |source| Unsafe::Io {
        what,
        path: path.display().to_string(),
        source,
    }
}

/// This process's effective user id.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What we need to know about a path, as `lstat` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub is_link: bool,
    pub is_dir: bool,
    pub owner: u32,
    /// Permission bits including the sticky bit (`0o7777`).
    pub mode: u32,
}

impl From<&Metadata> for Stat {
    fn from(m: &Metadata) -> Self {
        Stat {
            is_link: m.file_type().is_symlink(),
            is_dir: m.is_dir(),
            owner: m.uid(),
            mode: m.mode() & 0o7777,
        }
    }
}

fn lstat(path: &Path) -> Result<Option<Stat>, Unsafe> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(Stat::from(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("reading", path)(e)),
    }
}

/// Whether `st` may hold folders of ours: a real folder of ours (or root's) that only its
/// owner can change, or a sticky one (`/tmp`), where others cannot rename or remove our
/// entries. A sticky folder's owner can, so it must be ours or root's too.
pub fn check_parent(path: &str, st: Stat, me: u32) -> Result<(), Unsafe> {
    let path = path.to_string();
    if st.is_link {
        return Err(Unsafe::Link { path });
    }
    if !st.is_dir {
        return Err(Unsafe::NotDir { path });
    }
    if st.owner != me && st.owner != 0 {
        return Err(Unsafe::Owner {
            path,
            owner: st.owner,
            me,
        });
    }
    // In a sticky folder only its owner (checked above) and an entry's owner may rename or
    // remove the entry.
    let sticky = st.mode & 0o1000 != 0;
    if st.mode & 0o022 != 0 && !sticky {
        return Err(Unsafe::Writable {
            path,
            mode: st.mode,
        });
    }
    Ok(())
}

/// Whether `st` is our own real folder.
pub fn check_own_dir(path: &str, st: Stat, me: u32) -> Result<(), Unsafe> {
    let path = path.to_string();
    if st.is_link {
        return Err(Unsafe::Link { path });
    }
    if !st.is_dir {
        return Err(Unsafe::NotDir { path });
    }
    if st.owner != me {
        return Err(Unsafe::Owner {
            path,
            owner: st.owner,
            me,
        });
    }
    Ok(())
}

/// A folder to put private folders in: created (with its parents, mode 0700) when missing,
/// else checked with [`check_parent`].
pub fn open_parent(path: &Path) -> Result<(), Unsafe> {
    let st = create_if_missing(path)?;
    check_parent(&path.display().to_string(), st, my_uid())
}

/// `lstat` of `path` after creating it (with its parents, mode 0700) if it was missing.
fn create_if_missing(path: &Path) -> Result<Stat, Unsafe> {
    if lstat(path)?.is_none() {
        match DirBuilder::new().recursive(true).mode(0o700).create(path) {
            Ok(()) => {}
            // Another submission made it meanwhile: checked like any existing one.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io("creating", path)(e)),
        }
    }
    existing(path)
}

/// `lstat` of a path that must exist.
fn existing(path: &Path) -> Result<Stat, Unsafe> {
    lstat(path)?.ok_or_else(|| Unsafe::NotDir {
        path: path.display().to_string(),
    })
}

/// Sets mode 0700 on our folder.
fn set_0700(path: &Path) -> Result<(), Unsafe> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
        .map_err(io("setting the mode of", path))
}

/// Creates `path` as a new folder of ours, mode 0700. Refuses anything already there,
/// whether a folder, a file or a link (`mkdir` does not follow a link in the last
/// component).
pub fn create_private_dir(path: &Path) -> Result<(), Unsafe> {
    match DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Unsafe::Exists {
                path: path.display().to_string(),
            })
        }
        Err(e) => return Err(io("creating", path)(e)),
    }
    let st = existing(path)?;
    check_own_dir(&path.display().to_string(), st, my_uid())?;
    // The umask may have taken bits away; it cannot have added any.
    if st.mode & 0o777 != 0o700 {
        set_0700(path)?;
    }
    Ok(())
}

/// A private folder that may exist from earlier runs (like `~/.yarn-am`): created mode
/// 0700 when missing; an existing one must be our real folder, and loses any group or
/// world access it had. Returns whether the mode had to be fixed.
pub fn ensure_private_dir(path: &Path) -> Result<bool, Unsafe> {
    let st = create_if_missing(path)?;
    check_own_dir(&path.display().to_string(), st, my_uid())?;
    if st.mode & 0o077 != 0 {
        set_0700(path)?;
        return Ok(true);
    }
    Ok(false)
}

/// Removes our folder `path` and everything in it, after checking it is still our real
/// folder: a link put in its place is refused (and left alone), never followed. A folder
/// already gone is `Ok(false)`.
pub fn remove_private_dir(path: &Path) -> Result<bool, Unsafe> {
    let Some(st) = lstat(path)? else {
        return Ok(false);
    };
    check_own_dir(&path.display().to_string(), st, my_uid())?;
    // std's remove_dir_all does not follow links inside the tree, nor the top one.
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io("removing", path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A fresh scratch folder under the system temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let p = std::env::temp_dir().join(format!(
                "yarn-am-private-{name}-{}-{}",
                std::process::id(),
                rand::random::<u32>()
            ));
            std::fs::create_dir(&p).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
            Scratch(p)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    const DIR: Stat = Stat {
        is_link: false,
        is_dir: true,
        owner: 1000,
        mode: 0o755,
    };

    #[test]
    fn parents_must_be_real_folders_only_we_can_change_or_sticky() {
        assert!(check_parent("/p", DIR, 1000).is_ok());
        // Root's folders are fine (/tmp's parents, /var/tmp...).
        assert!(check_parent("/p", Stat { owner: 0, ..DIR }, 1000).is_ok());
        // /tmp: world-writable but sticky, owned by root.
        let tmp = Stat {
            owner: 0,
            mode: 0o1777,
            ..DIR
        };
        assert!(check_parent("/tmp", tmp, 1000).is_ok());
        let e = check_parent("/p", Stat { owner: 1001, ..DIR }, 1000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/p is owned by uid 1001, not by this user (uid 1000)"
        );
        let e = check_parent("/p", Stat { mode: 0o777, ..DIR }, 1000).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/p can be changed by other users (mode 777)"),
            "{e}"
        );
        let e = check_parent("/p", Stat { mode: 0o775, ..DIR }, 1000).unwrap_err();
        assert!(matches!(e, Unsafe::Writable { mode: 0o775, .. }), "{e}");
        // Sticky but another user's: they could still swap our entries.
        let theirs = Stat {
            owner: 1001,
            mode: 0o1777,
            ..DIR
        };
        assert!(matches!(
            check_parent("/p", theirs, 1000),
            Err(Unsafe::Owner { owner: 1001, .. })
        ));
        let e = check_parent(
            "/p",
            Stat {
                is_link: true,
                is_dir: false,
                ..DIR
            },
            1000,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/p is a symbolic link; refusing to follow it"
        );
        let e = check_parent(
            "/p",
            Stat {
                is_dir: false,
                ..DIR
            },
            1000,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "/p is not a folder");
    }

    #[test]
    fn own_folders_must_be_ours_and_real() {
        assert!(check_own_dir("/d", DIR, 1000).is_ok());
        let e = check_own_dir("/d", Stat { owner: 0, ..DIR }, 1000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/d is owned by uid 0, not by this user (uid 1000)"
        );
        let link = Stat {
            is_link: true,
            is_dir: false,
            ..DIR
        };
        assert!(matches!(
            check_own_dir("/d", link, 1000),
            Err(Unsafe::Link { .. })
        ));
    }

    #[test]
    fn a_private_folder_is_new_and_0700() {
        let s = Scratch::new("new");
        let d = s.0.join("app");
        create_private_dir(&d).unwrap();
        assert_eq!(mode(&d), 0o700);
        let e = create_private_dir(&d).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} already exists; refusing to use a folder this run did not create",
                d.display()
            )
        );
    }

    #[test]
    fn a_planted_link_is_refused_and_its_target_left_alone() {
        let s = Scratch::new("link");
        let target = s.0.join("victim");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("precious"), "x").unwrap();
        let planted = s.0.join("application_1_0002");
        symlink(&target, &planted).unwrap();
        let e = create_private_dir(&planted).unwrap_err();
        assert!(matches!(e, Unsafe::Exists { .. }), "{e}");
        assert!(e.to_string().contains("application_1_0002"), "{e}");
        let e = remove_private_dir(&planted).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is a symbolic link; refusing to follow it",
                planted.display()
            )
        );
        assert!(target.join("precious").exists());
        assert!(
            std::fs::symlink_metadata(&planted).is_ok(),
            "link left as found"
        );
        // A parent that is a link is refused too.
        let e = open_parent(&planted).unwrap_err();
        assert!(matches!(e, Unsafe::Link { .. }), "{e}");
    }

    #[test]
    fn parents_are_created_0700_and_checked() {
        let s = Scratch::new("parent");
        let root = s.0.join("a/b");
        open_parent(&root).unwrap();
        assert_eq!(mode(&root), 0o700);
        open_parent(&root).unwrap(); // existing and fine
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = open_parent(&root).unwrap_err();
        assert!(matches!(e, Unsafe::Writable { .. }), "{e}");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o1777)).unwrap();
        open_parent(&root).unwrap(); // sticky: like /tmp
        let file = s.0.join("file");
        std::fs::write(&file, "").unwrap();
        assert!(matches!(open_parent(&file), Err(Unsafe::NotDir { .. })));
    }

    #[test]
    fn an_existing_private_folder_is_checked_and_its_mode_fixed() {
        let s = Scratch::new("ensure");
        let d = s.0.join(".yarn-am");
        assert!(!ensure_private_dir(&d).unwrap());
        assert_eq!(mode(&d), 0o700);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(ensure_private_dir(&d).unwrap(), "mode fixed");
        assert_eq!(mode(&d), 0o700);
        let link = s.0.join("linked");
        symlink(&d, &link).unwrap();
        assert!(matches!(
            ensure_private_dir(&link),
            Err(Unsafe::Link { .. })
        ));
    }

    #[test]
    fn removal_removes_our_folder_once() {
        let s = Scratch::new("remove");
        let d = s.0.join("app");
        create_private_dir(&d).unwrap();
        std::fs::write(d.join("f"), "x").unwrap();
        assert!(remove_private_dir(&d).unwrap());
        assert!(!d.exists());
        assert!(!remove_private_dir(&d).unwrap(), "already gone is fine");
    }
}
