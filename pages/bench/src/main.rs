//! The browser benchmark page (`/bench/?file=NAME`, built from `bench.html`): the lab's own state
//! and core, timed, in a bundle of its own so a learner's first download carries none of it.

// The lab's modules the benchmark drives, shared by path (the lab's other parts are not needed).
#[allow(dead_code)]
#[path = "../../state.rs"]
mod state;
#[allow(dead_code)]
#[path = "../../convert.rs"]
mod convert;
#[path = "../../bench.rs"]
mod bench;

fn main() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
    leptos::mount::mount_to_body(bench::BenchPage);
}
