//! The load-model page (`/load-model/`): the same simulated server under a closed loop of N
//! clients and under an open loop at the throughput they reach, side by side, with an optional
//! stall. Every figure comes from the core's simulation (`tracelab_core::simulate`); this page
//! only draws it. A separate bundle, so the lab's own download does not grow.

mod app;
mod words;

fn main() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
    leptos::mount::mount_to_body(app::App);
}
