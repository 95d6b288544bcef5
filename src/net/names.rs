//! A name service (JCSP's CNS): a node that other nodes register channel names
//! with and resolve names through, so a writer need not know which machine (or
//! port) a reader is on.
//!
//! The service is an accepter published as [`SERVICE`] on a node: each client
//! node gets its own request/reply channel pair (see [`Node::accept`]), served
//! by its own process. A request is `(op, name, url)`; the reply is the URL, or
//! why not. A registration lives as long as the channel pair it was made
//! through, which the registering node keeps open: when that node is dropped
//! or its connection to the service is lost, the pair is poisoned and the
//! service removes the names registered through it. Registering a name again
//! replaces it (a program that restarted on another port takes its name back;
//! the old registration's end then no longer removes it). The `name_service`
//! example is a stand-alone service program.

use super::Node;
use hoare_core::chan::{Any, One, Receiver, Sender};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

/// The name the service's accepter is published under.
pub const SERVICE: &str = "hoare.names";
/// The longest name the service takes (bytes).
pub const MAX_NAME: usize = 1024;
/// The most names one service holds.
pub const MAX_NAMES: usize = 100_000;

const REGISTER: u8 = 1;
const RESOLVE: u8 = 2;

type Request = (u8, String, String);
type Reply = Result<String, String>;

/// Serves the name service on `node` (publishes [`SERVICE`]) until the node is
/// dropped. Returns at once; the service runs in processes of the caller's
/// runtime.
///
/// ```
/// use hoare::net::{serve_names, Node};
/// hoare::run(|| {
///     let ns = Node::bind("127.0.0.1:0", b"s").unwrap();
///     serve_names(&ns).unwrap();
///     let ns_addr = ns.local_addr().to_string();
///
///     let server = Node::bind("127.0.0.1:0", b"s").unwrap();
///     let rx = server.publish::<u32>("results").unwrap();
///     server.register(&ns_addr, "results").unwrap();
///
///     let client = Node::bind("127.0.0.1:0", b"s").unwrap();
///     let tx = client.connect_named::<u32>(&ns_addr, "results").unwrap();
///     let h = hoare::spawn(move || tx.send(7).unwrap());
///     assert_eq!(rx.recv().unwrap(), 7);
///     h.join().unwrap();
/// });
/// ```
pub fn serve_names(node: &Node) -> io::Result<()> {
    let clients = node.accept::<Request, Reply>(SERVICE)?;
    let names: Arc<Mutex<Names>> = Arc::default();
    drop(hoare_runtime::spawn(move || {
        for (client, (requests, replies)) in (0u64..).zip(clients.iter()) {
            let names = names.clone();
            drop(hoare_runtime::spawn(move || {
                let _unregister = Unregister {
                    names: &names,
                    client,
                };
                serve(&names, client, &requests, &replies)
            }));
        }
    }));
    Ok(())
}

/// The registered names: each with its URL and the client (channel pair) it
/// was registered through.
type Names = HashMap<String, (String, u64)>;

/// Removes the names a client registered once its channel pair ends (its
/// node dropped, its connection lost), on every way out of its process.
struct Unregister<'a> {
    names: &'a Mutex<Names>,
    client: u64,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        let mut map = self.names.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (_, owner)| *owner != self.client);
    }
}

fn serve(
    names: &Mutex<Names>,
    client: u64,
    requests: &Receiver<Request, One>,
    replies: &Sender<Reply, Any>,
) {
    for (op, name, url) in requests.iter() {
        let mut map = names.lock().unwrap_or_else(|p| p.into_inner());
        let reply = match op {
            _ if name.len() > MAX_NAME || url.len() > MAX_NAME => {
                Err(format!("a name or URL over {MAX_NAME} bytes"))
            }
            REGISTER if map.len() >= MAX_NAMES && !map.contains_key(&name) => {
                Err(format!("the name service is full ({MAX_NAMES} names)"))
            }
            REGISTER => {
                map.insert(name, (url.clone(), client));
                Ok(url)
            }
            RESOLVE => map
                .get(&name)
                .map(|(url, _)| url.clone())
                .ok_or_else(|| format!("no channel is registered as {name:?}")),
            _ => Err(format!("unknown name service request {op}")),
        };
        drop(map);
        if replies.send(reply).is_err() {
            return;
        }
    }
}

/// The channel pair a registration was made through: the registering node
/// keeps it open for as long as the name should stay registered.
pub(super) type Registration = (Sender<Request, Any>, Receiver<Reply, One>);

impl Node {
    /// Asks the name service at `service` over a new channel pair; returns the
    /// reply and the pair.
    fn ask_names(&self, service: &str, req: Request) -> io::Result<(String, Registration)> {
        let (tx, rx) = self.connect_pair::<Request, Reply>(&format!("{service}/{SERVICE}"))?;
        let lost = |what: &str, why: Option<hoare_core::chan::Reason>| {
            let why = why.map(|w| format!(": {w}")).unwrap_or_default();
            io::Error::new(
                io::ErrorKind::ConnectionAborted,
                format!("hoare: the name service at {service} {what}{why}"),
            )
        };
        tx.send(req)
            .map_err(|_| lost("stopped taking requests", tx.poison_reason()))?;
        let reply = rx
            .recv()
            .map_err(|_| lost("did not answer", rx.poison_reason()))?;
        let url = reply
            .map_err(|why| io::Error::new(io::ErrorKind::NotFound, format!("hoare: {why}")))?;
        Ok((url, (tx, rx)))
    }

    /// Registers `name` with the name service at `service` (`"HOST:PORT"` of
    /// the node running [`serve_names`]) as this node's channel (or accepter)
    /// published under `name`. Registering a name again replaces it. The name
    /// stays registered until this node is dropped or its connection to the
    /// service is lost (then the service removes it; a node that reconnects
    /// registers again).
    pub fn register(&self, service: &str, name: &str) -> io::Result<()> {
        let url = format!("{}/{name}", self.local_addr());
        let (_, pair) = self.ask_names(service, (REGISTER, name.to_owned(), url))?;
        self.keep_registration(pair);
        Ok(())
    }

    /// The URL (`"HOST:PORT/name"`) registered as `name` with the name service
    /// at `service`.
    pub fn resolve(&self, service: &str, name: &str) -> io::Result<String> {
        self.ask_names(service, (RESOLVE, name.to_owned(), String::new()))
            .map(|(url, _)| url)
    }

    /// [`connect`](Self::connect) to the channel registered as `name` with the
    /// name service at `service`.
    pub fn connect_named<T>(&self, service: &str, name: &str) -> io::Result<Sender<T, Any>>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send + 'static,
    {
        self.connect(&self.resolve(service, name)?)
    }
}
