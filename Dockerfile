# memstore's container image: the static binary alone, on an empty base.
#
#   docker build -t memstore .
#   docker run -d --name memstore -p 127.0.0.1:6366:6366 -v memstore:/data memstore
#   docker logs memstore        # the first API key, printed once
#
# The server is configured by MEMSTORE_* variables (docker run -e ...),
# which 'memstore healthcheck' reads too. See docs/container.md.

ARG GO_VERSION=1.26

# The build: a static, CGO-free binary (for the platform asked for, so
# that one builder makes every architecture), and the few files the final
# image needs.
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS TARGETARCH
# VERSION (a tag, v0.3.0) and COMMIT stamp the build as make dist does
# (memstore --version); .git is not sent to the build.
ARG VERSION="" COMMIT=""
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false -ldflags "-s -w${VERSION:+ -X main.tag=$VERSION}${COMMIT:+ -X main.commit=$COMMIT}" \
      -o /rootfs/usr/local/bin/memstore ./cmd/memstore
# /tmp for SQLite's temporary files, the CA certificates for webhooks
# over HTTPS and PostgreSQL with sslmode=verify-full, and /data, the
# server user's.
RUN mkdir -p /rootfs/tmp /rootfs/etc/ssl/certs /data \
 && chmod 1777 /rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
 && chown 65532:65532 /data && chmod 0700 /data

FROM scratch
COPY --from=build /rootfs/ /
COPY --from=build --chown=65532:65532 /data /data
# The database, its search index and the first key's copy all live in
# /data; the server listens on every interface of the container (publish
# the port to choose who reaches it).
ENV PATH=/usr/local/bin \
    HOME=/data \
    MEMSTORE_DB=/data/memstore.db \
    MEMSTORE_ADDR=0.0.0.0:6366
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 6366
HEALTHCHECK --interval=10s --timeout=10s --start-period=20s --retries=3 \
  CMD ["memstore", "healthcheck"]
ENTRYPOINT ["memstore"]
CMD ["serve"]
