//! A TCP proxy on loopback that can fail on demand, standing between the servers and a
//! database: `Up` forwards, `Refuse` closes every connection (old and new: a stopped
//! server), `Silent` keeps connections open and forwards nothing (a hung server or a
//! network partition, the case only timeouts end).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the proxy does with traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Up,
    Refuse,
    Silent,
}

pub struct FaultProxy {
    pub addr: SocketAddr,
    mode: Arc<watch::Sender<Mode>>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, _) = watch::channel(Mode::Up);
        let mode = Arc::new(tx);
        let modes = mode.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let rx = modes.subscribe();
                tokio::spawn(relay(client, upstream, rx));
            }
        });
        FaultProxy { addr, mode }
    }

    pub fn set(&self, mode: Mode) {
        self.mode.send_replace(mode);
    }
}

async fn relay(mut client: TcpStream, upstream: SocketAddr, mut mode: watch::Receiver<Mode>) {
    let now = *mode.borrow_and_update();
    match now {
        Mode::Refuse => return,
        Mode::Silent => return hold(client, mode).await,
        Mode::Up => {}
    }
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    // One copy future for the connection's life: a mode change to `Up` (already up) must
    // not drop it, which would lose the bytes it holds.
    let mut copy = Box::pin(async move {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        (client, server)
    });
    loop {
        tokio::select! {
            _ = &mut copy => return,
            changed = mode.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = *mode.borrow_and_update();
                match now {
                    Mode::Up => continue,
                    Mode::Refuse => return,
                    // Both ends stay open (held by the unfinished copy); nothing moves until
                    // the mode changes, then the connection is closed.
                    Mode::Silent => {
                        while *mode.borrow_and_update() == Mode::Silent {
                            if mode.changed().await.is_err() {
                                break;
                            }
                        }
                        return;
                    }
                }
            }
        }
    }
}

/// Keeps `client` open without reading it until the proxy leaves `Silent` (then closes it:
/// whatever was in flight is lost, as after a partition).
async fn hold(client: TcpStream, mut mode: watch::Receiver<Mode>) {
    while *mode.borrow_and_update() == Mode::Silent {
        if mode.changed().await.is_err() {
            break;
        }
    }
    drop(client);
}
