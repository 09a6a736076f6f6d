# syntax=docker/dockerfile:1
# queuewatch image, built by docker-compose.yml (service queuewatch):
#   docker build -t queuewatch --build-arg VERSION=$(git describe --tags) .
# The binary is static (no cgo: the SQLite driver is pure Go), so the
# runtime image is distroless: no shell, no package manager, non-root.

FROM golang:1.26.8 AS build
WORKDIR /src
# Modules first, so that source edits reuse the download layer.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/queuewatch ./cmd/queuewatch \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/queuewatch /queuewatch
# data_dir (replay jobs, audit log), owned by the nonroot user so a named
# volume mounted here starts writable.
COPY --from=build --chown=65532:65532 /out/data /var/lib/queuewatch
USER 65532:65532
EXPOSE 8080
VOLUME /var/lib/queuewatch
ENTRYPOINT ["/queuewatch"]
CMD ["serve", "--config", "/etc/queuewatch/queuewatch.yml"]
