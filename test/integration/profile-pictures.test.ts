// DELETE /api/v1/profile/avatar and /header: the account shows the default picture again and the old file is gone.
import { describe, expect, it } from "vitest";
import { makeUser } from "./helpers";
import { png, statusOf } from "./media-fixtures";

describe("DELETE /api/v1/profile/{avatar,header}", () => {
  it("removes each picture, deletes its file, and answers the CredentialAccount", async () => {
    const u = await makeUser();
    const form = new FormData();
    form.append("avatar", new File([await png(8, 8)], "a.png", { type: "image/png" }));
    form.append("header", new File([await png(16, 8)], "h.png", { type: "image/png" }));
    const set = await u.api.patch("/api/v1/accounts/update_credentials", form, "multipart");
    expect(set.status).toBe(200);
    const { avatar, header } = set.body as { avatar: string; header: string };
    expect(await statusOf(avatar)).toBe(200);

    const noAvatar = await u.api.delete("/api/v1/profile/avatar");
    expect(noAvatar.status).toBe(200);
    expect(noAvatar.body.avatar).toContain("missing");
    expect(noAvatar.body.header).toBe(header);
    expect(noAvatar.body.source).toBeDefined(); // CredentialAccount
    expect(await statusOf(avatar)).toBe(404);

    const noHeader = await u.api.delete("/api/v1/profile/header");
    expect(noHeader.status).toBe(200);
    expect(noHeader.body.header).toContain("missing");
    expect(await statusOf(header)).toBe(404);
    expect((await u.api.get("/api/v1/accounts/verify_credentials")).body).toMatchObject({ avatar: noAvatar.body.avatar, header: noHeader.body.header });

    // Nothing to remove is still a success.
    expect((await u.api.delete("/api/v1/profile/avatar")).status).toBe(200);
  });

  it("needs write:accounts", async () => {
    const u = await makeUser(undefined, { scopes: "read" });
    expect((await u.api.delete("/api/v1/profile/avatar")).status).toBe(403);
  });
});
