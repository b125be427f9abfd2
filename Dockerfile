# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY tools/build-console.mjs ./tools/
COPY src ./src
# Compiles the services and builds the web console (Vite) into dist/console, which the API serves at /console.
RUN npm run build

# Runtime stage: production dependencies and the compiled output only.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
# The same image runs every role; docker-compose.yml picks one per service.
CMD ["node", "dist/api/main.js"]
