//! The compare page (`/compare/`): two traces side by side with the core's contract check, each
//! figure's difference, its 95 % interval and verdict, and one chart of both TTFT distributions.
//! A separate bundle like the lessons page, so the lab's own download does not grow.

mod app;
mod chart;
mod page;
mod table;
mod words;

fn main() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
    leptos::mount::mount_to_body(app::App);
}
