//! Where the database lives: a private directory on a local filesystem, private files that are
//! not symbolic links, and quarantine of a damaged database.

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::StoreError;

/// The suffixes of SQLite's companion files in WAL mode.
pub(super) const COMPANIONS: [&str; 2] = ["-wal", "-shm"];

/// How many quarantined databases are kept for inspection; older ones are deleted so that
/// repeated damage cannot fill the disk.
const QUARANTINES_KEPT: usize = 2;

/// The database file an open store uses, by device and inode.
#[derive(Clone, Debug)]
pub struct Place {
    path: PathBuf,
    file: Option<(u64, u64)>,
}

impl Place {
    /// The file at `path` now.
    pub(super) fn of(path: &Path) -> Place {
        let file = std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        Place {
            path: path.to_path_buf(),
            file,
        }
    }

    /// The file's device and inode, when there was one.
    pub(super) fn identity(&self) -> Option<(u64, u64)> {
        self.file
    }

    /// Whether the file at its path is still the one it was: not deleted, not replaced.
    pub fn is_current(&self) -> bool {
        self.file.is_some() && Place::of(&self.path).file == self.file
    }

    /// For a database no connection of this process has open any more, after an update failed
    /// (the disk full, typically) and a checkpoint could not empty its write-ahead log: when
    /// that log is still over its size limit, deletes the database with it (the projection is
    /// disposable) rather than leave it taking the room, and says whether it did. It is moved
    /// aside first, as a quarantine is, so that no process meets a log without its database.
    pub fn discard_oversized_log(&self) -> bool {
        let log = std::fs::symlink_metadata(with_suffix(&self.path, "-wal"));
        let oversized = log.is_ok_and(|m| m.len() > super::schema::JOURNAL_SIZE_LIMIT as u64);
        if !oversized || !self.is_current() {
            return false;
        }
        let Ok(aside) = quarantine(&self.path) else {
            return false;
        };
        for suffix in COMPANIONS.iter().chain(&[""]) {
            let _ = std::fs::remove_file(with_suffix(&aside, suffix));
        }
        true
    }
}

/// `path` with `suffix` appended to its file name.
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The effective user, who must own the directory and every file of the database.
fn me() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// [`StoreError::NotOwned`] when another user owns `path`, whose metadata is `meta`. Even root
/// refuses: the files it would create there would lock their owner out.
fn owned(path: &Path, meta: &std::fs::Metadata) -> Result<(), StoreError> {
    match meta.uid() {
        uid if uid == me() => Ok(()),
        uid => Err(StoreError::NotOwned {
            path: path.to_path_buf(),
            uid,
        }),
    }
}

/// Why `dir` could not be created: the nearest existing directory above it when another user
/// owns it, else a directory this user may not write in.
fn denied(dir: &Path) -> StoreError {
    let nearest = dir
        .ancestors()
        .find_map(|p| Some((p, std::fs::symlink_metadata(p).ok()?)));
    match nearest.map(|(path, meta)| owned(path, &meta)) {
        Some(Err(not_owned)) => not_owned,
        _ => StoreError::Directory {
            code: "permission_denied",
        },
    }
}

/// Creates (0700) or checks the directory that holds the database: this user's own.
pub(super) fn prepare_dir(dir: &Path) -> Result<(), StoreError> {
    if let Err(e) = DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        return Err(match e.kind() {
            io::ErrorKind::PermissionDenied => denied(dir),
            io::ErrorKind::ReadOnlyFilesystem => StoreError::Directory { code: "read_only" },
            _ => StoreError::Directory {
                code: "not_creatable",
            },
        });
    }
    // `create` follows a symbolic link to a directory; the projection never works through one,
    // since whoever planted it chose where the files go.
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(StoreError::Symlink);
    }
    if !meta.is_dir() {
        return Err(StoreError::Directory {
            code: "not_a_directory",
        });
    }
    owned(dir, &meta)?;
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|_| {
            StoreError::Directory {
                code: "permission_denied",
            }
        })?;
    }
    if rustix::fs::access(
        dir,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .is_err()
    {
        return Err(StoreError::Directory {
            code: "permission_denied",
        });
    }
    let vfs = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    if vfs.f_flag.contains(rustix::fs::StatVfsMountFlags::RDONLY) {
        return Err(StoreError::Directory { code: "read_only" });
    }
    if is_remote(dir) {
        return Err(StoreError::NetworkFilesystem);
    }
    Ok(())
}

/// Checks that neither the database nor its companions is anything but a regular file, and
/// creates the database (0600) if it is missing; `true` if it was created.
///
/// SQLite creates the companions itself with the database file's permissions, so a private
/// database gives private companions.
pub(super) fn prepare_file(path: &Path) -> Result<bool, StoreError> {
    for suffix in COMPANIONS {
        check_file(&with_suffix(path, suffix))?;
    }
    if check_file(path)? {
        return Ok(false);
    }
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nofollow)
        .open(path)
    {
        Ok(_) => Ok(true),
        // Another process created it in between: check it as any existing file.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check_file(path).map(|_| false),
        Err(e) => Err(e.into()),
    }
}

/// `true` if `path` is a regular file of this user's (made private if it was not), `false` if it
/// is missing.
fn check_file(path: &Path) -> Result<bool, StoreError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_symlink() {
        return Err(StoreError::Symlink);
    }
    if !meta.is_file() {
        return Err(StoreError::NotAFile);
    }
    owned(path, &meta)?;
    if meta.mode() & 0o077 != 0 {
        // Through a descriptor opened without following links, so a link swapped in after the
        // check cannot redirect the change of mode.
        let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
        let nonblock = rustix::fs::OFlags::NONBLOCK.bits() as i32;
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(nofollow | nonblock)
            .open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(true)
}

/// Moves the database and its companions aside as `<name>.quarantined-<unix time>[-wal|-shm]`
/// and deletes all but the newest few earlier quarantines; returns the new name.
///
/// The companions go first: a fresh database created meanwhile by another process must never
/// meet the old write-ahead log, which SQLite would replay into it.
pub(super) fn quarantine(path: &Path) -> Result<PathBuf, StoreError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut target = with_suffix(path, &format!(".quarantined-{now}"));
    let mut n = 1;
    while std::fs::symlink_metadata(&target).is_ok() {
        target = with_suffix(path, &format!(".quarantined-{now}.{n}"));
        n += 1;
    }
    for suffix in COMPANIONS.iter().chain(&[""]) {
        match std::fs::rename(with_suffix(path, suffix), with_suffix(&target, suffix)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    prune_quarantines(path);
    Ok(target)
}

/// The quarantined databases next to `path`, oldest first.
pub(super) fn quarantines(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let mut prefix = name.to_owned();
    prefix.push(".quarantined-");
    let prefix = prefix.to_string_lossy().into_owned();
    let mut found: Vec<(u64, u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let rest = name.strip_prefix(&prefix)?;
            if COMPANIONS.iter().any(|s| rest.ends_with(s)) {
                return None;
            }
            let (secs, n) = rest.split_once('.').unwrap_or((rest, "0"));
            Some((secs.parse().ok()?, n.parse().ok()?, entry.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, _, p)| p).collect()
}

fn prune_quarantines(path: &Path) {
    let found = quarantines(path);
    let excess = found.len().saturating_sub(QUARANTINES_KEPT);
    for old in &found[..excess] {
        for suffix in COMPANIONS.iter().chain(&[""]) {
            // Best effort: an undeletable quarantine only costs space.
            let _ = std::fs::remove_file(with_suffix(old, suffix));
        }
    }
}

/// Whether `dir` is on a network filesystem, where SQLite's locks and WAL shared memory are
/// unreliable. Only Linux can tell cheaply; elsewhere every filesystem is taken as local.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn is_remote(dir: &Path) -> bool {
    const NFS: u32 = 0x6969;
    const SMB: u32 = 0x517b;
    const CIFS: u32 = 0xff53_4d42;
    const SMB2: u32 = 0xfe53_4d42;
    const AFS: u32 = 0x5346_414f;
    const CODA: u32 = 0x7375_7245;
    const NCP: u32 = 0x564c;
    const CEPH: u32 = 0x00c3_6400;
    const V9FS: u32 = 0x0102_1997;
    const FUSE: u32 = 0x6573_5546;
    let Ok(st) = rustix::fs::statfs(dir) else {
        return false;
    };
    // `f_type`'s width and signedness differ between architectures; the magic numbers are 32-bit.
    #[allow(clippy::unnecessary_cast)]
    let magic = st.f_type as u64 as u32;
    match magic {
        NFS | SMB | CIFS | SMB2 | AFS | CODA | NCP | CEPH | V9FS => true,
        // FUSE serves local filesystems too; its subtype, in the mount table, tells them apart.
        FUSE => fuse_subtype(dir).is_some_and(|t| REMOTE_FUSE.contains(&t.as_str())),
        _ => false,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn is_remote(_dir: &Path) -> bool {
    false
}

/// FUSE filesystems that reach another machine.
#[cfg(any(target_os = "linux", target_os = "android"))]
const REMOTE_FUSE: &[&str] = &[
    "fuse.sshfs",
    "fuse.rclone",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.davfs",
    "fuse.curlftpfs",
    "fuse.smbnetfs",
    "fuse.glusterfs",
    "fuse.ceph-fuse",
    "fuse.juicefs",
    "fuse.goofys",
];

/// The filesystem type of the mount that holds `dir`, from `/proc/self/mountinfo`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn fuse_subtype(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in table.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount = unescape(left.split(' ').nth(4)?);
        let fstype = right.split(' ').next()?;
        let len = mount.as_os_str().len();
        if dir.starts_with(&mount) && best.as_ref().is_none_or(|(l, _)| len >= *l) {
            best = Some((len, fstype.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

/// A mount point as the kernel writes it, with octal escapes for blanks and backslashes.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn unescape(s: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape(r"/mnt/a\040b\134c"), PathBuf::from(r"/mnt/a b\c"));
        assert_eq!(unescape(r"/x\04"), PathBuf::from(r"/x\04"));
    }

    #[test]
    fn a_temporary_directory_is_local() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_remote(dir.path()));
    }
}
