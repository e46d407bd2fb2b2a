export * from "./accounts";
export * from "./oauth";
export * from "./statuses";
export * from "./social";
export * from "./feeds";
export * from "./notifications";
export * from "./instance";
export * from "./federation";
