# The runtime base made here, in place of gcr.io/distroless/nodejs24-debian12:nonroot, with the same
# shape: node at /nodejs/bin/node and only what it loads (the C and C++ runtimes from Debian), the
# nonroot user (65532), a /tmp; no shell, no package manager.
ARG DEBIAN_BASE
FROM ${DEBIAN_BASE} AS files
COPY node /rootfs/nodejs/bin/node
RUN set -eu; \
    for lib in $(ldd /rootfs/nodejs/bin/node | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'); do \
      cp --parents -L "$lib" /rootfs/; \
    done; \
    [ -e /rootfs/lib64/ld-linux-x86-64.so.2 ] || cp --parents -L /lib64/ld-linux-x86-64.so.2 /rootfs/; \
    mkdir -p /rootfs/etc /rootfs/tmp /rootfs/home/nonroot; \
    chmod 1777 /rootfs/tmp; chown 65532:65532 /rootfs/home/nonroot; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /rootfs/etc/passwd; \
    printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' > /rootfs/etc/group; \
    chroot /rootfs /nodejs/bin/node --version

FROM scratch
COPY --from=files /rootfs/ /
ENV PATH=/nodejs/bin
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/nodejs/bin/node"]
