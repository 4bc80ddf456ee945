//! `yarn-am kv`: an application's key-value store from the command line, from outside (the
//! driver's secret) or inside one of its containers (the container's own KV key); see
//! [`client`] for how it reaches the AM and [`yarn_am_wire::kv`] for the endpoints.

mod client;

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use reqwest::Method;

use crate::cli::{KvArgs, KvOp};
use client::{encode_key, KvClient, Reply};
use yarn_am_wire::kv::{KvEntry, KvListing, KvStored, MAX_WAIT_SECS};

/// The application (when the first word names one) and the operation's own words.
pub fn split_words(op: KvOp, words: &[String]) -> anyhow::Result<(Option<String>, Vec<String>)> {
    // The fewest and most words each operation takes after APP.
    let (min, max) = match op {
        KvOp::Get | KvOp::Delete | KvOp::Wait => (1, 1),
        KvOp::Put => (1, 2),
        KvOp::List => (0, 1),
    };
    let (app, rest) = match words.split_first() {
        Some((first, rest)) if crate::tools::status::is_app_id(first) && rest.len() >= min => {
            (Some(first.clone()), rest.to_vec())
        }
        _ => (None, words.to_vec()),
    };
    if rest.len() < min || rest.len() > max {
        bail!(
            "`kv {}` takes [APP] then {}",
            format!("{op:?}").to_lowercase(),
            match op {
                KvOp::Get | KvOp::Delete | KvOp::Wait => "KEY",
                KvOp::Put => "KEY [VALUE]",
                KvOp::List => "[PREFIX]",
            }
        );
    }
    Ok((app, rest))
}

pub fn run(args: KvArgs) -> anyhow::Result<ExitCode> {
    let (app, words) = split_words(args.op, &args.words)?;
    // Read before any network call: a put from a pipe takes its value first.
    let value = match (args.op, words.get(1).map(String::as_str)) {
        (KvOp::Put, Some(v)) if v != "-" => Some(v.to_string()),
        (KvOp::Put, _) => {
            let mut v = String::new();
            std::io::stdin()
                .take(yarn_am_core::kv::KvLimits::default().max_value_bytes as u64 + 1)
                .read_to_string(&mut v)
                .context("reading the value from stdin (UTF-8 text)")?;
            Some(v)
        }
        _ => None,
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut kv = match &app {
            Some(app) => KvClient::outside(
                app,
                args.secret_dir.clone(),
                crate::cluster::rm::rm_rest(&args.rm)?,
            )?,
            None => KvClient::in_container()?,
        };
        let key = words.first().cloned().unwrap_or_default();
        let path = format!("/{}", encode_key(&key));
        let none = Duration::ZERO;
        let reply = match args.op {
            KvOp::Get => kv.call(Method::GET, &path, None, none).await?,
            KvOp::Put => kv.call(Method::PUT, &path, value, none).await?,
            KvOp::Delete => kv.call(Method::DELETE, &path, None, none).await?,
            KvOp::List => {
                let q = format!("?prefix={}", encode_key(&key));
                kv.call(Method::GET, &q, None, none).await?
            }
            KvOp::Wait => wait(&mut kv, &path, args.after, args.wait_timeout).await?,
        };
        print(args.op, args.json, reply)
    })
}

/// Long polls of at most [`MAX_WAIT_SECS`] each until the key has a version above `after`
/// or `timeout_secs` are over.
async fn wait(
    kv: &mut KvClient,
    path: &str,
    after: u64,
    timeout_secs: u64,
) -> anyhow::Result<Reply> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_secs);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let secs = left.as_secs().min(MAX_WAIT_SECS);
        let q = format!("{path}?wait={secs}&after={after}");
        match kv
            .call(Method::GET, &q, None, Duration::from_secs(secs))
            .await?
        {
            Reply::Absent(_) if secs > 0 => continue,
            Reply::Absent(_) => {
                return Ok(Reply::Absent(format!(
                    "no version above {after} within {timeout_secs} s"
                )))
            }
            found => return Ok(found),
        }
    }
}

fn print(op: KvOp, json: bool, reply: Reply) -> anyhow::Result<ExitCode> {
    let body = match reply {
        Reply::Ok(b) => b,
        Reply::Absent(message) => {
            eprintln!("yarn-am: {message}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = std::io::stdout().lock();
    match op {
        KvOp::Get | KvOp::Wait if json => out.write_all(&body)?,
        KvOp::Get | KvOp::Wait => {
            let e: KvEntry = serde_json::from_slice(&body).context("the store's answer")?;
            out.write_all(e.value.as_bytes())?;
        }
        KvOp::Put => {
            let s: KvStored = serde_json::from_slice(&body).context("the store's answer")?;
            writeln!(out, "{}", s.version)?;
        }
        KvOp::Delete => {
            let d: yarn_am_wire::kv::KvDeleted =
                serde_json::from_slice(&body).context("the store's answer")?;
            if !d.deleted {
                eprintln!("yarn-am: no key {:?}", d.key);
                return Ok(ExitCode::from(1));
            }
        }
        KvOp::List => {
            let l: KvListing = serde_json::from_slice(&body).context("the store's answer")?;
            let map: serde_json::Map<String, serde_json::Value> = l
                .entries
                .into_iter()
                .map(|e| (e.key, serde_json::Value::String(e.value)))
                .collect();
            writeln!(out, "{}", serde_json::Value::Object(map))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_first_word_is_the_app_only_when_it_is_an_application_id_and_words_remain() {
        let app = "application_1700000000000_0001";
        assert_eq!(
            split_words(KvOp::Get, &w(&[app, "k"])).unwrap(),
            (Some(app.to_string()), w(&["k"]))
        );
        assert_eq!(
            split_words(KvOp::Get, &w(&["k"])).unwrap(),
            (None, w(&["k"]))
        );
        // A key shaped like an id, alone, is the key.
        assert_eq!(
            split_words(KvOp::Get, &w(&[app])).unwrap(),
            (None, w(&[app]))
        );
        assert_eq!(
            split_words(KvOp::List, &w(&[app])).unwrap(),
            (Some(app.to_string()), w(&[]))
        );
        assert_eq!(split_words(KvOp::List, &w(&[])).unwrap(), (None, w(&[])));
        assert_eq!(
            split_words(KvOp::Put, &w(&[app, "k", "v"])).unwrap(),
            (Some(app.to_string()), w(&["k", "v"]))
        );
        for (op, bad) in [
            (KvOp::Get, w(&[])),
            (KvOp::Get, w(&["a", "b"])),
            (KvOp::Put, w(&["a", "b", "c"])),
            (KvOp::Wait, w(&[app])),
        ] {
            if op == KvOp::Wait {
                // `wait APP` alone waits for the key named like the app: allowed.
                assert!(split_words(op, &bad).is_ok());
                continue;
            }
            let e = split_words(op, &bad).unwrap_err().to_string();
            assert!(e.contains("takes [APP]"), "{e}");
        }
    }

    #[test]
    fn a_key_is_one_path_segment_whatever_it_holds() {
        assert_eq!(encode_key("dask/scheduler"), "dask%2Fscheduler");
        assert_eq!(encode_key("a/../b c?d#ü"), "a%2F..%2Fb%20c%3Fd%23%C3%BC");
        assert_eq!(encode_key("Plain-1._~"), "Plain-1._~");
    }
}
