# The gateway as a container image: one static binary, bubblewrap for the
# agents' sandbox, git for worktree workspaces; not root.
#
#   docker build -t acp-gateway .
#   docker run --rm -p 127.0.0.1:8484:8484 -v acp-data:/data \
#     --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined acp-gateway \
#     run --set channels.web.listen=0.0.0.0:8484 --set channels.web.token=SECRET
#
# The three --security-opt let bubblewrap make the namespaces of each
# agent's sandbox inside the container (Docker's defaults forbid user
# namespaces and a new /proc); without them gateway run and gateway worker
# refuse to start, saying so. Only where one container runs one trusted
# agent for one team may GATEWAY_AGENTS__SANDBOX=off replace them.
#
# The same image runs every role: run (the default), edge, worker, nats,
# check. Agents other than the built-in demo agent are not in it; see
# deploy/Dockerfile.node for one that needs Node.js.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The SQLite driver is pure Go, so the binary needs no C library.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gateway ./cmd/gateway
# The volumes' mount points, owned by the image's user so that a new named
# volume starts out writable by it (the data directory is private: 0700).
RUN mkdir -m 0700 /out/data && mkdir -m 0750 /out/shared /out/work && mkdir -p -m 0700 /out/auth/edge /out/auth/worker

FROM debian:12-slim
# bubblewrap: the agents' sandbox; git: workspace: worktree and /diff;
# ca-certificates: TLS to the platforms and model APIs.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap git ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 65532 nonroot && useradd -u 65532 -g 65532 -M -d /data -s /usr/sbin/nologin nonroot
COPY --from=build /out/gateway /usr/local/bin/gateway
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/shared /shared
# The cluster's credentials (deploy/compose.yaml): gateway nats writes
# them, an edge or a worker reads its role's.
COPY --from=build --chown=65532:65532 /out/auth /auth
# The working directory of agents in the shared workspace mode (never /:
# the gateway refuses it).
COPY --from=build --chown=65532:65532 /out/work /work
WORKDIR /work
# dataDir: the store, the event logs, the demo agent's sessions.
ENV GATEWAY_DATADIR=/data
VOLUME ["/data"]
# 65532: the image's user, not root.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gateway"]
CMD ["run"]
