# zkraft's image: a static binary on an empty base, built by `make docker` from a context
# it prepares (build/docker: the binary and the root's few directories). Nothing is pulled
# from a registry. It takes the official ZooKeeper image's environment (ZOO_MY_ID,
# ZOO_SERVERS, ZOO_TICK_TIME, ...) or a zoo.cfg mounted at /conf/zoo.cfg.
FROM scratch
COPY rootfs/etc/ /etc/
COPY --chown=1000:1000 rootfs/data/ /data/
COPY --chown=1000:1000 rootfs/datalog/ /datalog/
COPY --chown=1000:1000 rootfs/conf/ /conf/
COPY --chown=1000:1000 rootfs/tmp/ /tmp/
COPY zkraft /zkraft
ENV ZOO_CONF_DIR=/conf \
    ZOO_DATA_DIR=/data \
    ZOO_DATA_LOG_DIR=/datalog \
    ZOO_4LW_COMMANDS_WHITELIST=srvr,mntr,ruok \
    ZOO_CFG_EXTRA="metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider metricsProvider.httpPort=7000"
USER 1000:1000
WORKDIR /data
EXPOSE 2181 2888 3888 8080 7000
VOLUME ["/data", "/datalog"]
HEALTHCHECK --interval=2s --timeout=3s --start-period=5s --retries=3 CMD ["/zkraft", "healthcheck"]
ENTRYPOINT ["/zkraft"]
CMD ["start"]
