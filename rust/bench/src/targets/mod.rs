//! The servers under test: ours (Rust handlers, or Java handlers through a JVM), the raw echo
//! sockets (the floors), and rmcp.

use std::future::Future;
use std::io;
use std::path::Path;

use tokio::runtime::Runtime;

pub mod jvm;
pub mod ours;
pub mod raw;
pub mod rmcp;

/// Worker threads of the Tokio-based targets' runtimes: the same as our servers' default.
const TOKIO_WORKER_THREADS: usize = 2;

/// Binds `socket` and serves each connection with `serve`, as a task of a new two-worker
/// runtime whose threads are named `thread_name`; dropping the runtime stops them.
fn serve_on_tokio<F, Served>(socket: &Path, thread_name: &str, serve: F) -> io::Result<Runtime>
where
    F: Fn(tokio::net::UnixStream) -> Served + Send + 'static,
    Served: Future<Output = ()> + Send + 'static,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(TOKIO_WORKER_THREADS)
        .thread_name(thread_name)
        .enable_all()
        .build()?;
    let listener = std::os::unix::net::UnixListener::bind(socket)?;
    listener.set_nonblocking(true)?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::UnixListener::from_std(listener)?
    };
    runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    Ok(runtime)
}
