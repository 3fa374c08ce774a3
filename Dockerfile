# One image for both roles: `npm run api` or `npm run worker` (see docker-compose.yml).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts=false && npm cache clean --force
COPY . .
# The workflow bundle is built once, here: workers load it (WORKFLOW_BUNDLE)
# instead of running webpack at every start, and every worker of a release
# runs the very same workflow code.
RUN node scripts/bundle-workflows.ts /app/workflow-bundle.js
ENV NODE_ENV=production WORKFLOW_BUNDLE=/app/workflow-bundle.js
# Mount points the node user writes: named volumes start with the image's owner.
RUN mkdir -p /data /exports && chown node:node /data /exports
USER node
EXPOSE 8080
CMD ["node", "api/main.ts"]
