# perflab's image: the static binary on a distroless base, running as the
# nonroot user (uid 65532) that perflab k8s's manifests ask for.
#   docker build -t registry.example/perflab:dev .
# The run directories go to /runs (an emptyDir in perflab k8s's Job); the
# plan is mounted at /plan.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /perflab ./cmd/perflab

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /perflab /perflab
USER 65532:65532
WORKDIR /runs
ENTRYPOINT ["/perflab"]
CMD ["help"]
