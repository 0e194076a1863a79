# The recorder image for deploy/kubernetes/: one static tracelab binary (musl) on scratch.
# TLS uses rustls with its bundled web PKI roots, so no CA files are needed. NVML cannot be
# loaded from a static binary, so local GPU telemetry reports `unsupported`; fleet GPUs are read
# with --gpu dcgm=URL,… instead.
FROM rust:1.95-bookworm AS build
RUN rustup target add x86_64-unknown-linux-musl \
 && apt-get update && apt-get install -y --no-install-recommends musl-tools && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --locked --release -p tracelab-recorder --bin tracelab --target x86_64-unknown-linux-musl

FROM scratch
COPY --from=build /src/target/x86_64-unknown-linux-musl/release/tracelab /tracelab
USER 65534:65534
ENTRYPOINT ["/tracelab"]
