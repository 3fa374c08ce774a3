# One image for both roles: `npm run api` or `npm run worker` (see docker-compose.yml).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts=false && npm cache clean --force
COPY . .
ENV NODE_ENV=production
# Mount points the node user writes: named volumes start with the image's owner.
RUN mkdir -p /data /exports && chown node:node /data /exports
USER node
EXPOSE 8080
CMD ["node", "api/main.ts"]
