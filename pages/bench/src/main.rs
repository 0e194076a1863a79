//! The browser benchmark page (`/bench/?file=NAME`, built from `pages/bench/index.html`): the
//! lab's own state (the `trace_lab` library) and core, timed, in a bundle of its own so a
//! learner's first download carries none of it.

mod page;

fn main() {
    tracelab_web::install_panic_hook();
    leptos::mount::mount_to_body(page::BenchPage);
}
