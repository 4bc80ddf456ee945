//! Container logs after log aggregation: YARN's aggregated log files, read without I/O.
//! One file per layer: [`tfile`] is the TFile/BCFile container, [`aggregated`] the log
//! format YARN writes inside it. Fetching the files (WebHDFS) is the caller's.

pub mod aggregated;
pub mod tfile;
