//! Reading the job file (`submit --job`): through a size bound, then parsed and validated
//! by the core ([`Job::from_json`]), which never touches a file itself.

use std::io::Read;
use std::path::Path;

use thiserror::Error;

use yarn_am_core::driver::job::{Job, JobError};

/// Largest job file read: the whole job (every task's command and preferences) sits in the
/// client's and the AM's memory, and a larger file is far more likely a wrong path than a job.
pub const MAX_JOB_FILE_BYTES: u64 = 64 << 20;

/// Why a job file was not read, or what is wrong with the job in it.
#[derive(Debug, Error)]
pub enum JobFileError {
    #[error("cannot read the job file {file}: {message}")]
    Read { file: String, message: String },
    #[error("the job file {file} has {size} bytes, above the limit of {limit} bytes")]
    TooLarge { file: String, size: u64, limit: u64 },
    #[error(transparent)]
    Job(#[from] JobError),
}

/// Reads, parses and validates the job file at `path`, refusing one above
/// [`MAX_JOB_FILE_BYTES`] before reading it whole (and, for a file that grows or is no
/// regular file, after reading one byte past the limit).
pub fn read(path: &Path) -> Result<Job, JobFileError> {
    let file = path.display().to_string();
    let read_err = |e: std::io::Error| JobFileError::Read {
        file: file.clone(),
        message: e.to_string(),
    };
    let f = std::fs::File::open(path).map_err(read_err)?;
    let size = f.metadata().map_err(read_err)?.len();
    let too_large = |size| JobFileError::TooLarge {
        file: file.clone(),
        size,
        limit: MAX_JOB_FILE_BYTES,
    };
    if size > MAX_JOB_FILE_BYTES {
        return Err(too_large(size));
    }
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    let text = String::from_utf8(bytes).map_err(|e| JobFileError::Read {
        file: file.clone(),
        message: format!("not UTF-8: {e}"),
    })?;
    Ok(Job::from_json(&text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_file_size_is_limited_before_reading() {
        let dir = std::env::temp_dir().join(format!("yarn-am-job-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ok = dir.join("ok.json");
        let sample = r#"{"name": "sample", "executor": {"cores": 2, "memory_mb": 256},
            "tasks": [{"id": "t1", "command": "echo hi"}]}"#;
        std::fs::write(&ok, sample).unwrap();
        assert_eq!(read(&ok).unwrap().name, "sample");
        // A sparse file: its size is over the limit, its blocks are not on disk.
        let big = dir.join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_JOB_FILE_BYTES + 1).unwrap();
        let err = read(&big).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the job file {} has 67108865 bytes, above the limit of 67108864 bytes",
                big.display()
            )
        );
        let missing = dir.join("missing.json");
        let err = read(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("cannot read the job file {}", missing.display())),
            "{err}"
        );
        // A bad job in a readable file: the core's error, as it says it.
        std::fs::write(&ok, r#"{"name": ""}"#).unwrap();
        assert!(matches!(read(&ok), Err(JobFileError::Job(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
