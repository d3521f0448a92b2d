# One ferrite node. Build: docker build -t ferrite . ; run: docker run -p 8112:8112 -v ferrite-data:/data ferrite
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libatomic1 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY model ./model
COPY storage ./storage
COPY transport ./transport
COPY actors ./actors
COPY http ./http
COPY caql ./caql
COPY extensions ./extensions
COPY console ./console
COPY test ./test
COPY bench ./bench
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV FERRITE_HOST=0.0.0.0 FERRITE_PORT=8112 FERRITE_DATA_DIR=/data
VOLUME /data
EXPOSE 8112
STOPSIGNAL SIGTERM
CMD ["node", "bin/ferrite.js", "serve"]
