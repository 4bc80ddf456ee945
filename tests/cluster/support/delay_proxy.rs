//! A fault fixture: a TCP proxy on loopback that holds every chunk the client sends for a
//! fixed delay before forwarding it to the real server (replies pass at once). Put between
//! an AM and the RM's scheduler port it makes every RM call (and each handshake step) slow,
//! without a fake RM: the real one still answers.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

pub struct DelayProxy {
    /// `127.0.0.1:PORT`, what the client connects to.
    pub addr: String,
    /// Client chunks forwarded so far.
    forwarded: Arc<AtomicU64>,
    /// Connections accepted so far.
    connections: Arc<AtomicU64>,
}

impl DelayProxy {
    /// Starts a proxy to `target` (`host:port`) delaying client-to-server data by `delay`.
    /// It runs on a thread of its own (with its own runtime) until the test process ends,
    /// so it serves sync and async tests alike.
    pub fn start(target: &str, delay: Duration) -> DelayProxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding the proxy");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let forwarded = Arc::new(AtomicU64::new(0));
        let connections = Arc::new(AtomicU64::new(0));
        let (target, fw, conns) = (target.to_string(), forwarded.clone(), connections.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = TcpListener::from_std(listener).unwrap();
                while let Ok((client, _)) = listener.accept().await {
                    conns.fetch_add(1, Ordering::Relaxed);
                    let (target, fw) = (target.clone(), fw.clone());
                    tokio::spawn(async move {
                        let connect = TcpStream::connect(&target);
                        let Ok(Ok(server)) =
                            tokio::time::timeout(Duration::from_secs(10), connect).await
                        else {
                            return;
                        };
                        relay(client, server, delay, fw).await;
                    });
                }
            });
        });
        DelayProxy {
            addr,
            forwarded,
            connections,
        }
    }

    pub fn forwarded_chunks(&self) -> u64 {
        self.forwarded.load(Ordering::Relaxed)
    }

    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }
}

/// Client -> server: each chunk waits `delay` (in order, pipelined); server -> client: at
/// once. Either side closing ends both directions.
async fn relay(client: TcpStream, server: TcpStream, delay: Duration, fw: Arc<AtomicU64>) {
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let read_client = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match client_rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let due = tokio::time::Instant::now() + delay;
                    if tx.send((due, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    let write_server = async move {
        while let Some((due, chunk)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if server_wr.write_all(&chunk).await.is_err() {
                return;
            }
            fw.fetch_add(1, Ordering::Relaxed);
        }
        let _ = server_wr.shutdown().await;
    };
    let to_client = async move {
        let _ = tokio::io::copy(&mut server_rd, &mut client_wr).await;
        let _ = client_wr.shutdown().await;
    };
    // The client's data still in the queue is delivered before its close goes on.
    tokio::select! {
        _ = async { tokio::join!(read_client, write_server) } => {}
        _ = to_client => {}
    }
}
