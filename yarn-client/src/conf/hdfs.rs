//! The NameNode's web address (WebHDFS) from `hdfs-site.xml`, as HDFS's `DFSUtil` picks it:
//! `dfs.namenode.https-address` over TLS when `dfs.http.policy` is `HTTPS_ONLY`, else
//! `dfs.namenode.http-address`. Defaults follow `hdfs-default.xml`.

use super::configuration::Configuration;
use super::error::ConfError;
use super::yarn::https_only;

pub const DFS_HTTP_POLICY: &str = "dfs.http.policy";
pub const NAMENODE_HTTP_ADDRESS: &str = "dfs.namenode.http-address";
pub const NAMENODE_HTTPS_ADDRESS: &str = "dfs.namenode.https-address";

/// The NameNode's WebHDFS base URL (`http://host:9870` or `https://host:9871`).
pub fn namenode_web_url(conf: &Configuration) -> Result<String, ConfError> {
    let (scheme, key, default) = if https_only(conf, DFS_HTTP_POLICY)? {
        ("https", NAMENODE_HTTPS_ADDRESS, "0.0.0.0:9871")
    } else {
        ("http", NAMENODE_HTTP_ADDRESS, "0.0.0.0:9870")
    };
    let address = match conf.get_trimmed(key)? {
        Some(_) => conf.socket_addr(key, None)?,
        None => {
            let mut c = Configuration::new();
            c.set(key, default);
            c.socket_addr(key, None)?
        }
    };
    Ok(format!("{scheme}://{address}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_only_picks_the_https_address() {
        let mut c = Configuration::new();
        assert_eq!(namenode_web_url(&c).unwrap(), "http://0.0.0.0:9870");
        c.set(NAMENODE_HTTP_ADDRESS, "nn:9870");
        c.set(NAMENODE_HTTPS_ADDRESS, "nn:9871");
        assert_eq!(namenode_web_url(&c).unwrap(), "http://nn:9870");
        c.set(DFS_HTTP_POLICY, "HTTPS_ONLY");
        assert_eq!(namenode_web_url(&c).unwrap(), "https://nn:9871");
        let mut d = Configuration::new();
        d.set(DFS_HTTP_POLICY, "HTTPS_ONLY");
        assert_eq!(namenode_web_url(&d).unwrap(), "https://0.0.0.0:9871");
    }
}
