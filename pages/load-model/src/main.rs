//! The load-model page (`/load-model/`): the same simulated server under a closed loop of N
//! clients and under an open loop at the throughput they reach, side by side, with an optional
//! stall. Every figure comes from the core's simulation (`tracelab_core::simulate`); this page
//! only draws it. A separate bundle, so the lab's own download does not grow.

mod app;
mod coverage;
mod words;

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
