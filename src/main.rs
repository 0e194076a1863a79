//! Trace Lab, the browser half: a Leptos single-page app. Every figure it shows comes from
//! `tracelab-core`; the view only lays them out.

mod app;
mod bench;
mod components;
mod i18n;
mod loader;
mod persist;
mod state;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
